/// @file
/// The callback types dlbridge calls (a release, an emission's keep-alive and allocator), and
/// the rule they live by. Value types only, below every header that uses them.
///
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

#include <cstddef>
#include <cstdint>

#include "dlbridge/export.h"

namespace dlbridge {

/// Drops a producer's hold on memory. A release may run on ANY thread, and exactly once.
/// It must not throw: dlbridge catches anything it throws, counts the release as having run
/// (it is never called again) and counts the exception in CallbackExceptionCount()
/// (below); nothing escapes into dlbridge's caller.
using ReleaseFunction = void (*)(void* context);

/// What keeps one emission's memory alive: the emitted tensor's deleter calls
/// `release(context)` exactly once, after freeing the tensor, on whichever thread runs it (with
/// an ExportAllocator, its `deallocate` does both). A null `release` means nothing is kept
/// alive (the caller manages the memory's lifetime).
struct KeepAlive {
  /// Called once by the deleter with `context`; may be null.
  ReleaseFunction release = nullptr;
  /// The release's argument, and the emitted tensor's `manager_ctx`.
  void* context = nullptr;
};

/// Where an emission's one block (the managed tensor, its keep-alive, shape and strides) comes
/// from, and how it ends. Both null (the default): std::malloc, and a deleter that calls
/// std::free and then the keep-alive. Give both or neither.
struct ExportAllocator {
  /// Returns `bytes` bytes aligned for int64_t and pointers, or nullptr when it cannot.
  void* (*allocate)(size_t bytes) = nullptr;
  /// Ends an emission: frees `block` (from `allocate`), then drops `keep_alive` exactly once
  /// (calls `keep_alive.release(keep_alive.context)` when `release` is not null, or does that
  /// work itself). The deleter calls it once, on whichever thread runs it, instead of calling
  /// the keep-alive itself: an allocator that needs a lock to free (CPython's GIL for
  /// PyMem_Free) takes it once for both. Also called with an empty KeepAlive for a block an
  /// emission could not use (ledger builds, when the ledger cannot record it).
  void (*deallocate)(void* block, KeepAlive keep_alive) = nullptr;
};

/// How many exceptions releases, deleters and deallocators called by dlbridge have thrown in
/// this process (all swallowed). Never reset; thread-safe.
DLBRIDGE_API int64_t CallbackExceptionCount() noexcept;

}  // namespace dlbridge
