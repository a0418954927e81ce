// src/dlpack/checked_math_internal.h: the portable overflow checks (what an MSVC build uses) give
// the same answer and the same wrapped result as the compilers' builtins, at every boundary.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "dlpack/checked_math_internal.h"

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
const int64_t kValues[] = {0,
                           1,
                           -1,
                           2,
                           -2,
                           3,
                           kMax,
                           kMin,
                           kMax - 1,
                           kMin + 1,
                           kMax / 2,
                           kMin / 2,
                           kMax / 2 + 1,
                           kMin / 2 - 1,
                           3037000499,
                           3037000500,
                           -3037000499,
                           -3037000500,
                           4294967296,
                           -4294967296};

}  // namespace

#if defined(__GNUC__) || defined(__clang__)
TEST_CASE("checked arithmetic: the portable path agrees with the compiler's builtins") {
  namespace p = dlbridge::detail::portable;
  for (int64_t a : kValues) {
    for (int64_t b : kValues) {
      CAPTURE(a);
      CAPTURE(b);
      int64_t want = 0;
      int64_t got = 0;
      CHECK(p::MulOverflows(a, b, &got) == __builtin_mul_overflow(a, b, &want));
      CHECK(got == want);
      CHECK(p::AddOverflows(a, b, &got) == __builtin_add_overflow(a, b, &want));
      CHECK(got == want);
      CHECK(p::SubOverflows(a, b, &got) == __builtin_sub_overflow(a, b, &want));
      CHECK(got == want);
    }
  }
}
#endif

TEST_CASE("checked arithmetic: overflow at int64's ends is reported") {
  int64_t out = 0;
  CHECK(dlbridge::detail::MulOverflows(kMax, 2, &out));
  CHECK(dlbridge::detail::MulOverflows(kMin, -1, &out));
  CHECK_FALSE(dlbridge::detail::MulOverflows(3037000499, 3037000499, &out));
  CHECK(out == 9223372030926249001);
  CHECK(dlbridge::detail::AddOverflows(kMax, 1, &out));
  CHECK(dlbridge::detail::SubOverflows(kMin, 1, &out));
  CHECK_FALSE(dlbridge::detail::SubOverflows(-1, kMax, &out));
  CHECK(out == kMin);
}
