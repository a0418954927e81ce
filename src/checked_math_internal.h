// Checked int64 arithmetic: every layout and address computation goes through these.
#pragma once

#include <cstdint>

namespace dlbridge {
namespace detail {

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

}  // namespace detail
}  // namespace dlbridge
