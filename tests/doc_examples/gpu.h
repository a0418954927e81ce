// Prelude of docs/gpu.md's fragment: memory a CUDA allocation gave and two CUDA streams.
#include <cstdint>
#include <vector>

inline void* device_pointer = nullptr;
inline void FreeOnDevice(void*) {}  // e.g. cuMemFree
inline int64_t n = 1024;
inline int64_t bytes = n * 4;
inline int64_t producer_stream = 1, consumer_stream = 2;  // Python DLPack stream values
