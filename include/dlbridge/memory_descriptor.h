/// @file
/// MemoryDescriptor: one contiguous buffer on the host or a GPU, described with primitive
/// values only, and who keeps it alive.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>

#include "dlbridge/callbacks.h"
#include "dlbridge/export.h"
#include "dlbridge/memory_space.h"

namespace dlbridge {
namespace detail {
struct DescriptorAccess;  // lets the converters move a hold without extra allocations
}  // namespace detail

/// Describes a buffer (pointer as int64, size in bytes, memory space, role) and holds it
/// alive in one of two exclusive forms:
///  - an owner reference (SetOwner): the memory lives while the descriptor holds it;
///  - a release callback with its context (SetRelease, SetReleaseAddress): called once when
///    the hold is dropped. This is DLPack's deleter/manager_ctx shape.
/// While a descriptor holds either, the memory is valid. A descriptor with neither
/// describes memory whose lifetime the caller manages some other way.
///
/// Move-only. Destroying or overwriting a descriptor drops its hold exactly once; the
/// release callback may therefore run on whichever thread destroys the descriptor.
class DLBRIDGE_API MemoryDescriptor {
 public:
  /// Describes nothing: "host", role "data", pointer 0, size 0, no hold.
  MemoryDescriptor() noexcept  // NOLINT: the owner reference is constructed on SetOwner
      : pointer_(0), size_(0), space_(MemorySpace::kHost), release_(nullptr), context_(nullptr) {}
  /// Drops the hold: a release runs here, once; an owner reference is dropped. Inline: a
  /// descriptor with no hold and the default role is dropped with one comparison.
  ~MemoryDescriptor() {
    if (kind_ != HoldKind::kNone || ownsRole_) Drop();
  }
  /// Takes `other`'s description and hold. `other` is left as a new descriptor: pointer 0,
  /// size 0, "host", role "data", no hold (so exporting it fails the bounds check instead of
  /// describing memory it no longer keeps alive).
  MemoryDescriptor(MemoryDescriptor&& other) noexcept;
  /// Drops this descriptor's hold first, then takes `other`'s description and hold; `other`
  /// is left as a new descriptor, as after the move constructor.
  MemoryDescriptor& operator=(MemoryDescriptor&& other) noexcept;  // drops this hold first
  MemoryDescriptor(const MemoryDescriptor&) = delete;
  MemoryDescriptor& operator=(const MemoryDescriptor&) = delete;

  /// Sets the description in one call; validated as the single setters are. The hold is
  /// untouched. Throws Error on a bad space, a negative size or a null pointer with bytes.
  void Set(int64_t pointer, int64_t sizeInBytes, const char* memorySpace,
           const char* role = "data");

  /// Set() from a pointer to any object type (float*, const void*, ...): no cast at the call.
  /// A template so that a literal 0 still picks the int64 overload. Same checks and defaults
  /// otherwise, except that the space defaults to "host".
  // HLP-5: the pointer overloads store the address the int64 ones would.
  template <class T, class = std::enable_if_t<!std::is_function_v<T>>>
  void Set(T* pointer, int64_t sizeInBytes, const char* memorySpace = "host",
           const char* role = "data") {
    Set(AddressOf(pointer), sizeInBytes, memorySpace, role);
  }

  /// The buffer's address as a 64-bit integer. A null pointer needs size 0.
  void SetPointer(int64_t pointer);
  /// SetPointer() from a pointer to any object type; see the pointer overload of Set().
  template <class T, class = std::enable_if_t<!std::is_function_v<T>>>
  void SetPointer(T* pointer) {
    SetPointer(AddressOf(pointer));
  }
  /// The buffer's address as a 64-bit integer (0: none).
  int64_t GetPointer() const noexcept { return pointer_; }

  /// Size of the buffer in bytes; never negative.
  void SetSizeInBytes(int64_t sizeInBytes);
  /// Size of the buffer in bytes.
  int64_t GetSizeInBytes() const noexcept { return size_; }

  /// "host", "cuda", "hip" or "level_zero" (default "host"). Anything else throws
  /// Error(kInvalidMemorySpace) naming the accepted values; "metal" says why it is absent.
  void SetMemorySpace(const char* memorySpace);
  /// The same from the enum. A value outside the enum (an integer cast to MemorySpace) throws
  /// Error(kInvalidMemorySpace) and changes nothing.
  void SetMemorySpace(MemorySpace space);
  /// The space's name: "host", "cuda", "hip" or "level_zero" (static storage).
  const char* GetMemorySpace() const noexcept;
  /// The space as an enum.
  MemorySpace GetMemorySpaceKind() const noexcept { return space_; }

  /// The buffer's role within an array ("data" by default). Free text, not null.
  void SetRole(const char* role);
  /// The role. The string belongs to the descriptor: valid until the role is set again, or
  /// the descriptor is moved from or destroyed.
  const char* GetRole() const noexcept { return role_; }

  /// Holds `owner` alive for as long as this descriptor holds it. Drops any earlier hold
  /// first; nullptr clears the hold.
  void SetOwner(std::shared_ptr<const void> owner);
  /// The owner reference, or an empty pointer when the hold is not an owner.
  std::shared_ptr<const void> GetOwner() const;

  /// Holds memory owned outside C++ references: `release(context)` runs once when the
  /// hold is dropped (destruction, move-assignment over it, or a later SetOwner/SetRelease/
  /// SetReleaseAddress with a different hold; re-setting the same pair keeps it). Drops any earlier
  /// hold first; a null `release` clears the hold (and `context` is ignored).
  void SetRelease(ReleaseFunction release, void* context);
  /// As SetRelease(), with both addresses as integers, for wrapped callers (Python, C).
  void SetReleaseAddress(int64_t release, int64_t context);

  /// Whether this descriptor currently keeps the memory alive (owner or release).
  bool HasOwnership() const noexcept { return kind_ != HoldKind::kNone; }

  /// Hands the release duty to the caller: on true, the caller must call
  /// `release(context)` exactly once and this descriptor holds nothing any more. For an
  /// owner hold, the pair's single call drops that owner reference. Returns false, and
  /// leaves both out-parameters null, when nothing is held. May throw Error(kOutOfMemory)
  /// for an owner hold (a small block carries the reference); the hold is kept then.
  bool TakeRelease(ReleaseFunction& release, void*& context);

  /// The release callback and its context, or nullptr when the hold is not a release.
  ReleaseFunction GetRelease() const noexcept { return release_; }
  /// The release's context, or nullptr when the hold is not a release.
  void* GetReleaseContext() const noexcept { return context_; }
  /// The same as integers, for wrapped callers; 0 when the hold is not a release.
  int64_t GetReleaseAddress() const noexcept;
  /// GetReleaseContext() as an integer, for wrapped callers; 0 when the hold is not a release.
  int64_t GetReleaseContextAddress() const noexcept;

 private:
  friend struct detail::DescriptorAccess;
  enum class HoldKind : unsigned char { kNone, kOwner, kRelease };
  static int64_t AddressOf(const volatile void* pointer) noexcept {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer));
  }
  void DropHold() noexcept;
  void Drop() noexcept;         // the destructor's work when there is a hold or a role to free
  void BecomeEmpty() noexcept;  // the state of a new descriptor, for a moved-from one
  void TakeFrom(MemoryDescriptor& other) noexcept;  // both moves: other's state, other left new
  void FreeRole() noexcept;                         // back to the static "data"
  void StoreRole(const char* role);                 // "data": the static one; any other: a copy
  // The role "data", static: a descriptor with it owns no string.
  static const char kDataRole[];

  // An import's result (detail::DescriptorAccess::Unfilled): no hold and the role "data", the
  // rest unwritten until the importer writes it, so that a fast import stores each field once.
  struct Unfilled {};
  explicit MemoryDescriptor(Unfilled) noexcept {}  // NOLINT: see Unfilled

  // MD-1: the defaults are "host", role "data", pointer 0, size 0 and no hold (the default
  // constructor writes the description and release; every constructor writes the hold and role).
  int64_t pointer_;
  int64_t size_;
  MemorySpace space_;
  HoldKind kind_ = HoldKind::kNone;
  bool ownsRole_ = false;  // role_ is a copy this descriptor frees (any role but "data")
  ReleaseFunction release_;
  void* context_;
  const char* role_ = kDataRole;
  // The owner reference, alive only while kind_ is kOwner (constructed by SetOwner, destroyed
  // when that hold is dropped or moved), so that a descriptor without one never touches it.
  union {
    std::shared_ptr<const void> owner_;
  };
};

}  // namespace dlbridge
