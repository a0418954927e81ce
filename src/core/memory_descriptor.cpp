// MemoryDescriptor: description setters and the exclusive owner/release hold.
#include "dlbridge/memory_descriptor.h"

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

}  // namespace

// MD-6: destruction drops the hold: a held release runs here, exactly once.
MemoryDescriptor::~MemoryDescriptor() { DropHold(); }

// MD-7: moving transfers the description and the hold; `other` is left as a new descriptor
// (see MD-1), so a moved-from tensor describes no bytes instead of memory it no longer holds.
MemoryDescriptor::MemoryDescriptor(MemoryDescriptor&& other) noexcept
    : pointer_(other.pointer_),
      size_(other.size_),
      space_(other.space_),
      kind_(other.kind_),
      release_(other.release_),
      context_(other.context_),
      owner_(std::move(other.owner_)),
      role_(std::move(other.role_)) {
  other.BecomeEmpty();
}

MemoryDescriptor& MemoryDescriptor::operator=(MemoryDescriptor&& other) noexcept {
  if (this != &other) {
    DropHold();  // MD-7: the target's old hold is dropped once, first
    pointer_ = other.pointer_;
    size_ = other.size_;
    space_ = other.space_;
    kind_ = other.kind_;
    release_ = other.release_;
    context_ = other.context_;
    owner_ = std::move(other.owner_);
    role_ = std::move(other.role_);
    other.BecomeEmpty();
  }
  return *this;
}

void MemoryDescriptor::BecomeEmpty() noexcept {
  pointer_ = 0;
  size_ = 0;
  space_ = MemorySpace::kHost;
  kind_ = HoldKind::kNone;
  release_ = nullptr;
  context_ = nullptr;
  owner_.reset();  // already empty: moved from
  role_ = "data";  // fits the string's inline buffer: no allocation, cannot throw
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
    owner_.reset();
  }
}

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
  role_ = role;  // first: the only step that can throw (bad_alloc), so nothing is half-set
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
  role_ = role;
}

void MemoryDescriptor::SetOwner(std::shared_ptr<const void> owner) {
  DropHold();   // MD-8: the old hold goes first
  if (owner) {  // MD-9: nullptr leaves no hold
    owner_ = std::move(owner);
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
    kind_ = HoldKind::kNone;
    detail::LedgerHoldTaken();
    release = &DropOwnerBlock;
    context = block;
    return true;
  }
  return false;  // MD-11: nothing held: false, both outputs null
}

}  // namespace dlbridge
