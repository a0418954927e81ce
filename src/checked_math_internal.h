// Checked int64 arithmetic: every layout and address computation goes through these.
#pragma once

#include <cstdint>
#include <limits>

namespace dlbridge {
namespace detail {

// GCC and clang (MinGW included) have overflow builtins; MSVC gets the same answers from
// comparisons made before the operation, so nothing overflows (signed overflow is UB).
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
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
/// *out = a * b (wrapped, as the builtins do); true when the product overflows int64.
inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  bool overflow = false;
  if (a != 0 && b != 0) {
    if (a > 0) {
      overflow = b > 0 ? a > kInt64Max / b : b < kInt64Min / a;
    } else {
      overflow =
          b > 0 ? a < kInt64Min / b : (a == kInt64Min || b == kInt64Min || -a > kInt64Max / -b);
    }
  }
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return overflow;
}
/// *out = a + b (wrapped); true when the sum overflows int64.
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) {
  const bool overflow = b > 0 ? a > kInt64Max - b : a < kInt64Min - b;
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  return overflow;
}
/// *out = a - b (wrapped); true when the difference overflows int64.
inline bool SubOverflows(int64_t a, int64_t b, int64_t* out) {
  const bool overflow = b < 0 ? a > kInt64Max + b : a < kInt64Min + b;
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  return overflow;
}
#endif

}  // namespace detail
}  // namespace dlbridge
