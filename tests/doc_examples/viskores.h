// Prelude of docs/bridges/viskores.md's fragment: tensors from DLPack producers.
#include <dlbridge/dlbridge.h>
#include <viskores/cont/Algorithm.h>

inline DLManagedTensorVersioned* managed = nullptr;
inline dlbridge::Tensor xyz, x, y, z;
