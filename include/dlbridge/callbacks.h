/// @file
/// Callbacks must not throw. dlbridge calls three kinds of caller code: a descriptor's release
/// (MemoryDescriptor::SetRelease, dlb_descriptor_set_release), a producer's DLPack deleter
/// (after FromDLPack, on success or failure) and an ExportAllocator's deallocate. Should one
/// throw anyway, dlbridge never lets the exception become undefined behaviour or end the
/// process: it catches it where it made the call, treats the callback as having run (it is
/// never called again, so "exactly once" still holds), carries on as if it had returned (an
/// import that failed still throws its own Error; an export's deleter still frees its block)
/// and counts it here. Nothing a callback throws reaches dlbridge's caller, a C caller
/// included. spec/lifetime.md ("Callbacks", see LT-7) gives the rule.
///
/// An owner's deleter (the std::shared_ptr given to MemoryDescriptor::SetOwner) is not called
/// by dlbridge but by std::shared_ptr, whose destructor is noexcept: the C++ standard requires
/// that deleter not to throw, and dlbridge cannot catch it.
#pragma once

#include <cstdint>

#include "dlbridge/export.h"

namespace dlbridge {

/// How many exceptions releases, deleters and deallocators called by dlbridge have thrown in
/// this process (all swallowed). Never reset; thread-safe.
DLBRIDGE_API int64_t CallbackExceptionCount() noexcept;

}  // namespace dlbridge
