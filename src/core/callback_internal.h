// The one way dlbridge calls a caller's release, DLPack deleter or export deallocator
// (spec/lifetime.md, callbacks): a throw is caught here, so it never unwinds through a
// noexcept frame (std::terminate) nor through a DLPack deleter into a C caller (undefined
// behaviour). The callback counts as having run: it is never called again.
#pragma once

#include "dlbridge/callbacks.h"

namespace dlbridge {
namespace detail {

/// Records one exception a callback threw (CallbackExceptionCount). In src/core/callbacks.cpp.
void NoteCallbackException() noexcept;

/// release(context), once; a throw is counted and swallowed.
inline void CallRelease(ReleaseFunction release, void* context) noexcept {
  try {
    release(context);
  } catch (...) {
    NoteCallbackException();
  }
}

/// managed->deleter(managed), once (the deleter must be non-null); a throw is counted and
/// swallowed.
template <class Managed>
inline void CallDeleter(Managed* managed) noexcept {
  try {
    managed->deleter(managed);
  } catch (...) {
    NoteCallbackException();
  }
}

/// An ExportAllocator's deallocate(block, keep_alive), once; a throw is counted and swallowed.
inline void CallDeallocate(void (*deallocate)(void*, KeepAlive), void* block,
                           KeepAlive keep_alive) noexcept {
  try {
    deallocate(block, keep_alive);
  } catch (...) {
    NoteCallbackException();
  }
}

}  // namespace detail
}  // namespace dlbridge
