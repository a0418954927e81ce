// Prelude of docs/bridges.md's "Helpers" fragment: a container's values and a C handle.
#include <cstddef>
#include <vector>

inline std::size_t rows = 2, cols = 3;
inline std::vector<float> values(rows* cols);
inline std::size_t bytes = values.size() * sizeof(float);
using Handle = int*;
inline Handle handle = nullptr;
inline void FreeHandle(Handle) {}
