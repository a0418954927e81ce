// The out-of-line parts of MakeOwner (include/dlbridge/owner.h): its error and its count of
// exceptions onDrop callables threw.
#include "dlbridge/owner.h"

#include "core/callback_internal.h"
#include "core/error_internal.h"

namespace dlbridge {
namespace detail {

void NoteOwnerCallbackException() noexcept { NoteCallbackException(); }

void FailOwnerAllocation() {
  Fail(ErrorCode::kOutOfMemory, "MakeOwner: could not allocate the owner block");
}

}  // namespace detail
}  // namespace dlbridge
