// The count of exceptions thrown by callers' callbacks (include/dlbridge/callbacks.h).
#include <atomic>
#include <cstdint>

#include "core/callback_internal.h"

namespace dlbridge {
namespace {

std::atomic<int64_t> g_callback_exceptions{0};

}  // namespace

namespace detail {

// LT-7: a throwing callback is counted, never rethrown.
void NoteCallbackException() noexcept {
  g_callback_exceptions.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace detail

int64_t CallbackExceptionCount() noexcept {
  return g_callback_exceptions.load(std::memory_order_relaxed);
}

}  // namespace dlbridge
