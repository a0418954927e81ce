// Checked int64 arithmetic: every layout and address computation goes through these.
#pragma once

#include <cstdint>
#include <limits>

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

}  // namespace detail
}  // namespace dlbridge
