// Checked int64 arithmetic: every layout and address computation goes through these; and the
// span arithmetic built on it that a layout keeps (FastSpan, the one pass of the fast paths:
// TensorLayout computes it once when it is built, the recognisers of dlpack_fast_paths.h read it).
#pragma once

#include <cstdint>
#include <limits>

#include "dlbridge/dlpack_header.h"

namespace dlbridge {
namespace detail {

// Without the compilers' overflow builtins (MSVC): the same answers from comparisons made
// before the operation, so nothing overflows (signed overflow is undefined), and the result
// wrapped as the builtins wrap it. Always compiled: tests/test_checked_math.cpp checks these
// against the builtins wherever the builtins exist.
namespace portable {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
inline int64_t Wrap(uint64_t bits) {
  return bits <= static_cast<uint64_t>(kMax)
             ? static_cast<int64_t>(bits)
             : -static_cast<int64_t>(~bits) - 1;  // two's complement, without a narrowing cast
}
inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  bool overflow = false;
  if (a != 0 && b != 0) {
    if (a > 0) {
      overflow = b > 0 ? a > kMax / b : b < kMin / a;
    } else if (b > 0) {
      overflow = a < kMin / b;
    } else {
      overflow = a == kMin || b == kMin || -a > kMax / -b;
    }
  }
  *out = Wrap(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return overflow;
}
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  const bool overflow = b > 0 ? a > kMax - b : a < kMin - b;
  *out = Wrap(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  return overflow;
}
inline bool SubOverflows(int64_t a, int64_t b, int64_t* out) {
  const bool overflow = b < 0 ? a > kMax + b : a < kMin + b;
  *out = Wrap(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  return overflow;
}
}  // namespace portable

#if defined(__GNUC__) || defined(__clang__)
/// *out = a * b; true when the product overflows int64.
inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}
/// *out = a + b; true when the sum overflows int64.
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_add_overflow(a, b, out);
}
/// *out = a - b; true when the difference overflows int64.
inline bool SubOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_sub_overflow(a, b, out);
}
#else
using portable::AddOverflows;
using portable::MulOverflows;
using portable::SubOverflows;
#endif

/// The bytes a layout can touch, relative to element zero.
struct ByteSpan {
  int64_t count = 0;  ///< Number of elements.
  int64_t low = 0;    ///< Byte offset of the lowest reachable byte from element zero (<= 0).
  int64_t bytes = 0;  ///< Bytes from the lowest to one past the highest reachable byte.
};

/// The fast path of import and export (issue 17): one pass over shape and strides that copies
/// them to `dims` (shape then strides; nullptr: no copy; `strides` nullptr: C-contiguous, as
/// EffectiveStrides reads them) and computes the span, for the common
/// case only: ndim extents >= 1, whole-byte elements, no product or sum overflowing int64.
/// False whenever that is not proven (an extent 0 or negative, packed sub-byte elements, any
/// overflow): the caller then runs the rules (CheckShape, ComputeSpan), which decide and word
/// every error. It enforces nothing, only recognises layouts the rules accept (see IMP-8,
/// see IMP-10), with the same span as ComputeSpan's.
[[gnu::always_inline]] inline bool FastSpan(DLDataType dtype, int32_t ndim, const int64_t* shape,
                                            const int64_t* strides, int64_t* dims,
                                            ByteSpan* out) noexcept {
  // RT-5: accepts a subset of what the rules accept, with their span; the rest goes to them.
  // Unsigned (bits * lanes < 2^24): the remainder and the quotient are a mask and a shift.
  const uint32_t elementBits = uint32_t{dtype.bits} * dtype.lanes;
  if (elementBits % 8 != 0) return false;  // packed or padded sub-byte: the rules decide
  // From the last dimension back: while the strides are the C-contiguous ones (or the extent
  // is 1), the count is the whole reach and no stride product is needed. From the first other
  // stride on, each dimension's reach is added to the low or high end. The reach sums have one
  // sign each (lo <= 0 < end), so whether they overflow does not depend on the order of the
  // dimensions: this accepts exactly what ComputeSpan accepts, with the same span.
  const int64_t n = ndim;  // 64-bit: the loops end on the decrement's borrow
  int64_t i = n - 1;
  int64_t count = 1;
  int64_t extents = 0;  // the contiguous extents OR-ed: negative when one of them is
  for (; i >= 0; --i) {
    const int64_t extent = shape[i];
    // NULL strides (legacy, or where they are allowed: see IMP-9) are the C-contiguous ones: the
    // count so far, as EffectiveStrides makes them; this loop then runs to the end.
    const int64_t stride = strides != nullptr ? strides[i] : count;
    if (dims != nullptr) {
      dims[i] = extent;
      dims[n + i] = stride;
    }
    // Contiguous (the common case) first; a dimension that is not goes to the loop below,
    // which judges its extent too.
    if (stride != count && extent != 1) break;
    extents |= extent;
    if (MulOverflows(count, extent, &count)) return false;
  }
  // Every contiguous extent >= 1, judged once: none negative, and then a product without
  // overflow is 0 only when one of them is 0; so the top bit of extents | (count - 1) decides.
  // Unsigned: negative extents can leave any count, INT64_MIN included. (What the loop wrote to
  // `dims` after an extent < 1 is the caller's to discard, as on any decline.)
  if (((static_cast<uint64_t>(count) - 1) | static_cast<uint64_t>(extents)) >> 63 != 0) {
    return false;
  }
  int64_t lo = 0;
  int64_t end = count;   // one past the highest reachable element (from element zero)
  for (; i >= 0; --i) {  // strided (dimension i was copied above; copying it again is harmless)
    const int64_t extent = shape[i];
    const int64_t stride = strides[i];
    if (dims != nullptr) {
      dims[i] = extent;
      dims[n + i] = stride;
    }
    int64_t reach = 0;
    if (extent < 1 || MulOverflows(count, extent, &count) ||
        MulOverflows(stride, extent - 1, &reach)) {
      return false;
    }
    if (reach < 0 ? AddOverflows(lo, reach, &lo) : AddOverflows(end, reach, &end)) return false;
  }
  const int64_t itemBytes = elementBits / 8;  // >= 0: no overflow below comes from it
  int64_t elements = 0;
  ByteSpan span;
  span.count = count;
  if (SubOverflows(end, lo, &elements) || MulOverflows(lo, itemBytes, &span.low) ||
      MulOverflows(elements, itemBytes, &span.bytes)) {
    return false;
  }
#if defined(__GNUC__) || defined(__clang__)
  // Known, not checked, so that the callers' tests on them fold: every extent was judged >= 1
  // above, so the count is at least 1 (see IMP-11's "count == 0"), and only negative reaches
  // move the low end, so it is at most 0 (see IMP-10's start, byte_offset plus the low end).
  if (span.count < 1 || span.low > 0) __builtin_unreachable();
#endif
  *out = span;
  return true;
}

}  // namespace detail
}  // namespace dlbridge
