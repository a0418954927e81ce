// Stream ordering (spec/streams.md STR-*) against the fake CUDA driver and HIP runtime
// (tests/fakes), which dlbridge loads by path through its real backends.
#include <doctest/doctest.h>

#include "counting.h"
#include "dlbridge/testing.h"

TEST_CASE("STR-1 stream values are checked per device") {
  CHECK_NOTHROW(dlbridge::CheckStreamValue({kDLCUDA, 0}, 1, "s"));
}
