// MemoryDescriptor: description setters and the exclusive owner/release hold.
#include "dlbridge/memory_descriptor.h"

#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "core/callback_internal.h"
#include "core/error_internal.h"
#include "core/ledger_internal.h"
#include "core/memory_space_internal.h"
#include "dlbridge/error.h"

namespace dlbridge {
namespace {

// TakeRelease on an owner hold: the reference travels in a small block the release frees.
void DropOwnerBlock(void* context) { delete static_cast<std::shared_ptr<const void>*>(context); }

// Ends the owner reference (moved out first, so that a deleter that reaches the descriptor finds
// no owner). Out of line: the common drop, a release, then needs no frame for a shared_ptr.
[[gnu::noinline]] void EndOwner(std::shared_ptr<const void>& owner) noexcept {
  std::shared_ptr<const void> moved = std::move(owner);
  owner.~shared_ptr();
}

}  // namespace

const char MemoryDescriptor::kDataRole[] = "data";

// MD-6: destruction drops the hold: a held release runs here, exactly once (the inline
// destructor calls this only when there is a hold or a role copy).
void MemoryDescriptor::Drop() noexcept {
  if (ownsRole_) FreeRole();  // the descriptor ends here: the static "data" needs no store
  const HoldKind kind = kind_;
  kind_ = HoldKind::kNone;  // a release that reaches this descriptor finds no hold
  if (kind == HoldKind::kRelease) {
    detail::LedgerHoldDropped();
    detail::CallRelease(release_, context_);  // MD-13: on whichever thread drops the hold
  } else if (kind == HoldKind::kOwner) {
    detail::LedgerHoldDropped();
    EndOwner(owner_);
  }
}

void MemoryDescriptor::FreeRole() noexcept {
  if (ownsRole_) {
    ownsRole_ = false;
    delete[] const_cast<char*>(role_);
  }
  role_ = kDataRole;
}

// MD-7: moving transfers the description and the hold; `other` is left as a new descriptor
// (see MD-1), so a moved-from tensor describes no bytes instead of memory it no longer holds.
MemoryDescriptor::MemoryDescriptor(MemoryDescriptor&& other) noexcept { TakeFrom(other); }

MemoryDescriptor& MemoryDescriptor::operator=(MemoryDescriptor&& other) noexcept {
  if (this != &other) {
    DropHold();  // MD-7: the target's old hold is dropped once, first
    FreeRole();
    TakeFrom(other);
  }
  return *this;
}

// Both moves: this holds nothing and owns no role copy on entry (new, or dropped just before).
void MemoryDescriptor::TakeFrom(MemoryDescriptor& other) noexcept {
  pointer_ = other.pointer_;
  size_ = other.size_;
  space_ = other.space_;
  kind_ = other.kind_;
  release_ = other.release_;
  context_ = other.context_;
  if (kind_ == HoldKind::kOwner) {
    new (&owner_) std::shared_ptr<const void>(std::move(other.owner_));
    other.owner_.~shared_ptr();
  }
  role_ = other.role_;
  ownsRole_ = other.ownsRole_;
  other.ownsRole_ = false;  // the role copy is ours now
  other.BecomeEmpty();
}

// Called with the owner reference already moved out and destroyed (or never there).
void MemoryDescriptor::BecomeEmpty() noexcept {
  pointer_ = 0;
  size_ = 0;
  space_ = MemorySpace::kHost;
  kind_ = HoldKind::kNone;
  release_ = nullptr;
  context_ = nullptr;
  FreeRole();  // a moved-from role copy is no longer owned here: back to the static "data"
}

void MemoryDescriptor::DropHold() noexcept {
  // Disarm before calling out, so a release that touches this descriptor sees no hold.
  HoldKind kind = kind_;
  ReleaseFunction release = release_;
  void* context = context_;
  kind_ = HoldKind::kNone;
  release_ = nullptr;
  context_ = nullptr;
  if (kind != HoldKind::kNone) detail::LedgerHoldDropped();
  if (kind == HoldKind::kRelease) {
    detail::CallRelease(release, context);  // MD-13: on whichever thread drops the hold
  } else if (kind == HoldKind::kOwner) {
    EndOwner(owner_);
  }
}

// The role as this descriptor keeps it: "data" is the static one, any other a copy. Allocates
// before anything changes (throws std::bad_alloc, as std::string did, leaving the role as it was).
namespace {
char* CopyRole(const char* role) {
  const size_t length = std::strlen(role);
  char* copy = new char[length + 1];
  std::memcpy(copy, role, length + 1);
  return copy;
}
}  // namespace

void MemoryDescriptor::Set(int64_t pointer, int64_t sizeInBytes, const char* memorySpace,
                           const char* role) {
  // Validate everything before changing anything, so a throw leaves the descriptor as it was
  // (see MD-3).
  MemorySpace space = ParseMemorySpace(memorySpace);
  // MD-5: a negative size, a null pointer with bytes and a null role are refused.
  if (sizeInBytes < 0) {
    detail::Fail(ErrorCode::kInvalidDescriptor, "MemoryDescriptor: sizeInBytes is " +
                                                    std::to_string(sizeInBytes) +
                                                    "; a size must be >= 0");
  }
  if (pointer == 0 && sizeInBytes != 0) {
    detail::Fail(ErrorCode::kInvalidDescriptor,
                 "MemoryDescriptor: pointer is null but sizeInBytes is " +
                     std::to_string(sizeInBytes) + "; a null pointer describes 0 bytes");
  }
  if (role == nullptr) {
    detail::Fail(ErrorCode::kInvalidArgument,
                 "MemoryDescriptor: role is null; give a name such as \"data\"");
  }
  // MD-2: Set stores pointer, size, space and role; the hold is untouched.
  StoreRole(role);  // first: the only step that can throw (bad_alloc), so nothing is half-set
  pointer_ = pointer;
  size_ = sizeInBytes;
  space_ = space;
}

void MemoryDescriptor::SetPointer(int64_t pointer) {
  if (pointer == 0 && size_ != 0) {
    detail::Fail(ErrorCode::kInvalidDescriptor,
                 "MemoryDescriptor: pointer is null but sizeInBytes is " + std::to_string(size_) +
                     "; set the size to 0 first, or give a non-null pointer");
  }
  pointer_ = pointer;
}

void MemoryDescriptor::SetSizeInBytes(int64_t sizeInBytes) {
  if (sizeInBytes < 0) {
    detail::Fail(ErrorCode::kInvalidDescriptor, "MemoryDescriptor: sizeInBytes is " +
                                                    std::to_string(sizeInBytes) +
                                                    "; a size must be >= 0");
  }
  if (pointer_ == 0 && sizeInBytes != 0) {
    detail::Fail(ErrorCode::kInvalidDescriptor,
                 "MemoryDescriptor: sizeInBytes is " + std::to_string(sizeInBytes) +
                     " but the pointer is null; set a non-null pointer first");
  }
  size_ = sizeInBytes;
}

void MemoryDescriptor::SetMemorySpace(const char* memorySpace) {
  space_ = ParseMemorySpace(memorySpace);
}

void MemoryDescriptor::SetMemorySpace(MemorySpace space) {
  detail::CheckMemorySpace("MemoryDescriptor::SetMemorySpace", space);  // see MD-15
  space_ = space;
}

const char* MemoryDescriptor::GetMemorySpace() const noexcept { return MemorySpaceName(space_); }

void MemoryDescriptor::SetRole(const char* role) {
  if (role == nullptr) {
    detail::Fail(ErrorCode::kInvalidArgument,
                 "MemoryDescriptor: role is null; give a name such as \"data\"");
  }
  StoreRole(role);
}

void MemoryDescriptor::StoreRole(const char* role) {
  if (role == role_) return;  // its own role again (GetRole()'s pointer): nothing to copy
  if (std::strcmp(role, kDataRole) == 0) {
    FreeRole();
    return;
  }
  char* copy = CopyRole(role);
  FreeRole();
  role_ = copy;
  ownsRole_ = true;
}

void MemoryDescriptor::SetOwner(std::shared_ptr<const void> owner) {
  DropHold();   // MD-8: the old hold goes first
  if (owner) {  // MD-9: nullptr leaves no hold
    new (&owner_) std::shared_ptr<const void>(std::move(owner));
    kind_ = HoldKind::kOwner;
    detail::LedgerHoldSet();
  }
}

// MD-8: the forms are exclusive: no owner while a release is held (nor a release with an owner).
std::shared_ptr<const void> MemoryDescriptor::GetOwner() const {
  return kind_ == HoldKind::kOwner ? owner_ : std::shared_ptr<const void>();
}

void MemoryDescriptor::SetRelease(ReleaseFunction release, void* context) {
  // Re-setting the pair already held must not run it: the memory is still in use (MD-14).
  if (kind_ == HoldKind::kRelease && release == release_ && context == context_) return;
  DropHold();                // MD-8: a different pair: the old hold goes first
  if (release != nullptr) {  // MD-9: a null release leaves no hold
    release_ = release;
    context_ = context;
    kind_ = HoldKind::kRelease;
    detail::LedgerHoldSet();
  }
}

// MD-10: SetRelease with integers; GetReleaseAddress/GetReleaseContextAddress read them back.
void MemoryDescriptor::SetReleaseAddress(int64_t release, int64_t context) {
  SetRelease(reinterpret_cast<ReleaseFunction>(static_cast<intptr_t>(release)),
             reinterpret_cast<void*>(static_cast<intptr_t>(context)));
}

int64_t MemoryDescriptor::GetReleaseAddress() const noexcept {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(release_));
}

int64_t MemoryDescriptor::GetReleaseContextAddress() const noexcept {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(context_));
}

bool MemoryDescriptor::TakeRelease(ReleaseFunction& release, void*& context) {
  release = nullptr;
  context = nullptr;
  if (kind_ == HoldKind::kRelease) {  // MD-11: the pair is handed over, the descriptor disarmed
    release = release_;
    context = context_;
    release_ = nullptr;
    context_ = nullptr;
    kind_ = HoldKind::kNone;
    detail::LedgerHoldTaken();
    return true;
  }
  // MD-12: an owner travels in a block; the pair's one call (DropOwnerBlock) drops the reference.
  if (kind_ == HoldKind::kOwner) {
    auto* block = new (std::nothrow) std::shared_ptr<const void>(std::move(owner_));
    if (block == nullptr) {
      detail::Fail(ErrorCode::kOutOfMemory,
                   "MemoryDescriptor::TakeRelease: could not allocate the owner block");
    }
    owner_.~shared_ptr();
    kind_ = HoldKind::kNone;
    detail::LedgerHoldTaken();
    release = &DropOwnerBlock;
    context = block;
    return true;
  }
  return false;  // MD-11: nothing held: false, both outputs null
}

}  // namespace dlbridge
