// Checks shared by export and import: dtype rules, checked arithmetic, the byte span.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>

#include "dlbridge/error.h"
#include "dlbridge/tensor_layout.h"
#include "error_internal.h"

namespace dlbridge {
namespace detail {

inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}

/// Import fills its result's layout in place: no temporary, no second round of checks
/// beyond the extents (ndim is in range and shape non-null: the caller checked).
struct LayoutAccess {
  static void Assign(TensorLayout& layout, DLDataType dtype, int32_t ndim, const int64_t* shape,
                     const int64_t* strides) {
    layout.Assign(ndim, shape, strides);
    layout.dtype_ = dtype;
  }
};

/// The flag bits this build knows.
uint64_t KnownFlags() noexcept;

/// Throws Error(kInvalidDtype) unless lanes >= 1 and bits match the code; `where` prefixes
/// the message ("FromDLPack", "ToDLPackVersioned", ...).
void CheckDtype(const char* where, DLDataType dtype);

/// Whether this build knows the dtype code (the rows CheckDtype checks bits against).
bool IsKnownDtypeCode(uint8_t code) noexcept;

/// Whether elements of this dtype are packed below byte granularity (fp4/fp6 unpadded).
bool IsPackedSubByte(DLDataType dtype, uint64_t flags) noexcept;

/// The bytes a layout can touch, relative to element zero.
struct ByteSpan {
  int64_t count = 0;  ///< Number of elements.
  int64_t low = 0;    ///< Byte offset of the lowest reachable byte from element zero (<= 0).
  int64_t bytes = 0;  ///< Bytes from the lowest to one past the highest reachable byte.
};

/// Computes the span of ndim extents and strides (non-null when ndim > 0), checking every
/// product and sum for int64 overflow. Extents must already be >= 0.
ByteSpan ComputeSpan(const char* where, DLDataType dtype, uint64_t flags, int32_t ndim,
                     const int64_t* shape, const int64_t* strides);

/// "int32x4"-style text of a dtype for messages.
std::string DtypeText(DLDataType dtype);

}  // namespace detail
}  // namespace dlbridge
