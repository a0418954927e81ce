/// @file
/// MakeOwner: an owner for MemoryDescriptor::SetOwner made from any object (a value, a smart
/// pointer, or a handle with the callable that frees it), without a hand-written adaptor.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "dlbridge/export.h"

namespace dlbridge {
namespace detail {

/// Counts an exception an onDrop callable threw (dlbridge/callbacks.h,
/// CallbackExceptionCount); never throws.
DLBRIDGE_API void NoteOwnerCallbackException() noexcept;
/// Throws Error(kOutOfMemory) for an owner block that could not be allocated.
[[noreturn]] DLBRIDGE_API void FailOwnerAllocation();

template <class T>
struct IsSharedPtr : std::false_type {};
template <class T>
struct IsSharedPtr<std::shared_ptr<T>> : std::true_type {};
template <class T>
struct IsUniquePtr : std::false_type {};
template <class T, class D>
struct IsUniquePtr<std::unique_ptr<T, D>> : std::true_type {};

// The block of MakeOwner(handle, onDrop): its destructor is the one call of onDrop.
template <class H, class F>
struct HandleHold {
  // onDrop is copied first: if that copy throws, the handle is still the caller's, untouched,
  // and MakeOwner's catch releases it (parameters by value would leave the order to the
  // compiler, and a moved-from handle to that catch).
  template <class G>
  HandleHold(H& h, G&& f) : onDrop(std::forward<G>(f)), handle(std::move(h)) {}
  HandleHold(const HandleHold&) = delete;
  HandleHold& operator=(const HandleHold&) = delete;
  ~HandleHold() {
    try {
      onDrop(handle);
    } catch (...) {
      NoteOwnerCallbackException();
    }
  }
  F onDrop;  // declared first, so constructed first
  H handle;
};

}  // namespace detail

/// An owner that keeps `value` alive: a std::shared_ptr is returned as it is (no new block), a
/// std::unique_ptr becomes one (its deleter runs when the hold drops), anything else (an
/// Eigen::Matrix, a vtkSmartPointer, an at::Tensor, a std::vector) is moved or copied into one
/// block that destroys it when the last reference drops, on whichever thread drops it. Use:
/// `md.SetOwner(dlbridge::MakeOwner(std::move(matrix)));`, then point the descriptor at the
/// value's memory through `GetOwner()` or at the memory the moved value still owns.
///
/// A raw pointer owns nothing and does not compile: pass a smart pointer, or
/// MakeOwner(handle, onDrop). On failure (Error(kOutOfMemory)) nothing was taken: an rvalue
/// `value` is left as it was.
// HLP-7: a value, a smart pointer or a handle is held without a hand-written adaptor.
template <class T>
std::shared_ptr<const void> MakeOwner(T&& value) {
  using V = std::decay_t<T>;
  static_assert(!std::is_pointer_v<V>,
                "dlbridge::MakeOwner(value): a raw pointer owns nothing; pass a smart pointer, "
                "or MakeOwner(handle, onDrop) with the callable that frees it");
  if constexpr (detail::IsSharedPtr<V>::value) {
    return std::shared_ptr<const void>(std::forward<T>(value));
  } else {
    try {
      if constexpr (detail::IsUniquePtr<V>::value) {
        // A null unique_ptr gives an empty owner: nothing to hold.
        return std::shared_ptr<const void>(
            std::shared_ptr<typename V::element_type>(std::forward<T>(value)));
      } else {
        return std::shared_ptr<const void>(std::make_shared<V>(std::forward<T>(value)));
      }
    } catch (const std::bad_alloc&) {
      detail::FailOwnerAllocation();
    }
  }
}

/// An owner that runs `onDrop(handle)` (the handle as an lvalue) exactly once, when the last
/// reference drops, on whichever thread drops it: a release for a handle of any type (a raw
/// vtkObject* with `Delete`, a C library's handle with its free function). `onDrop` should not
/// throw; if it does, the exception is swallowed and counted in CallbackExceptionCount()
/// (dlbridge/callbacks.h) and the drop counts as done. If the owner block cannot be
/// allocated, `onDrop(handle)` runs before Error(kOutOfMemory) is thrown, so the handle is
/// released exactly once on failure too.
// HLP-8: onDrop(handle) runs exactly once, on the dropping thread; a throw is counted.
template <class H, class F>
std::shared_ptr<const void> MakeOwner(H handle, F&& onDrop) {
  using Hold = detail::HandleHold<H, std::decay_t<F>>;
  static_assert(std::is_invocable_v<std::decay_t<F>&, H&>,
                "dlbridge::MakeOwner(handle, onDrop): onDrop must be callable as onDrop(handle)");
  static_assert(std::is_nothrow_move_constructible_v<H>,
                "dlbridge::MakeOwner(handle, onDrop): the handle must move without throwing "
                "(a pointer, an id, a smart pointer), or a failed move could lose it");
  try {
    // One block; the handle is moved into it last, once the block and onDrop's copy exist.
    return std::shared_ptr<const void>(std::make_shared<Hold>(handle, std::forward<F>(onDrop)));
  } catch (const std::bad_alloc&) {
    try {
      onDrop(handle);  // never held: released here, once (still ours: not moved from)
    } catch (...) {
      detail::NoteOwnerCallbackException();
    }
    detail::FailOwnerAllocation();
  }
}

}  // namespace dlbridge
