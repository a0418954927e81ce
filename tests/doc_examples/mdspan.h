// Prelude of docs/bridges/mdspan.md's fragment: a buffer held by a shared_ptr.
#include <dlbridge/dlbridge.h>

#include <cstddef>
#include <memory>
#include <vector>

inline std::size_t rows = 2, cols = 3;
inline auto buffer = std::make_shared<std::vector<double>>(rows * cols);
inline DLManagedTensorVersioned* managed = nullptr;
