// Prelude of docs/bridges/kokkos.md's fragment: extents, a producer's tensor, a kernel body.
#include <dlbridge/dlbridge.h>

#include <Kokkos_Core.hpp>

inline int n = 4, m = 3;
inline DLManagedTensorVersioned* managed = nullptr;
KOKKOS_INLINE_FUNCTION void use(float) {}
