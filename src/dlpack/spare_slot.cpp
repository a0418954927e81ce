// The spare export block's thread-local slot (see LT-8), alone in its translation unit so that
// it can be reached through a TLS descriptor (CMakeLists.txt) safely.
#include "dlpack/export_internal.h"

namespace dlbridge {
namespace detail {

namespace {
// Trivially destructible and constant-initialised: an access needs no guard.
thread_local SpareSlot t_spare{nullptr, false, false};
}  // namespace

// Out of line, and nothing else here: a TLS descriptor's call is assumed to keep every register
// but one, and glibc before 2.40 (BZ #31372) lets its slow path, taken by a dlopen'ed library
// whose TLS did not fit the static surplus, clobber the vector registers. A caller of this
// function keeps nothing in them across an ordinary call, so that bug cannot reach it.
[[gnu::noinline]] SpareSlot* ThisThreadSpare() noexcept { return &t_spare; }

}  // namespace detail
}  // namespace dlbridge
