// Prelude of the C++ API tour's fragments (docs/cpp.md): a simulation's field and a tensor
// from a DLPack producer. tests/check_doc_examples.py explains preludes.
#include <dlbridge/dlbridge.h>

#include <cstdint>
#include <utility>

inline double* field = nullptr;     // the simulation's buffer
inline void* simulation = nullptr;  // what ReleaseField is given
inline void ReleaseField(void*) {}
inline int64_t rows = 2, cols = 3;
inline int64_t bytes = rows * cols * 8;
inline DLManagedTensorVersioned* managed = nullptr;  // from any DLPack producer
