// Moves a descriptor's hold into an export block (or out of an import) without the
// allocation TakeRelease needs for owner holds.
#pragma once

#include <memory>
#include <new>
#include <utility>

#include "core/ledger_internal.h"
#include "dlbridge/memory_descriptor.h"

namespace dlbridge {
namespace detail {

struct DescriptorAccess {
  /// An import's result before the importer writes it: no hold, the role "data", and the
  /// description and release unwritten. The importer writes them (Describe, then Arm, GiveOwner
  /// or Disarm), or makes it a new descriptor (Clear), before anything reads them.
  static MemoryDescriptor Unfilled() noexcept {
    return MemoryDescriptor(MemoryDescriptor::Unfilled{});
  }
  /// Makes a descriptor that holds nothing a new one's (see MD-1), whatever was written before.
  static void Clear(MemoryDescriptor& d) noexcept { d.BecomeEmpty(); }
  static bool HoldsOwner(const MemoryDescriptor& d) noexcept {
    return d.kind_ == MemoryDescriptor::HoldKind::kOwner;
  }
  /// Moves the owner reference out of a descriptor that HoldsOwner; it holds nothing afterwards.
  static std::shared_ptr<const void> TakeOwner(MemoryDescriptor& d) noexcept {
    LedgerHoldTaken();
    d.kind_ = MemoryDescriptor::HoldKind::kNone;
    std::shared_ptr<const void> owner = std::move(d.owner_);
    d.owner_.~shared_ptr();  // alive only while the hold was an owner
    return owner;
  }
  /// Sets the description without the setters' checks, for values import has validated.
  static void Describe(MemoryDescriptor& d, int64_t pointer, int64_t size,
                       MemorySpace space) noexcept {
    d.pointer_ = pointer;
    d.size_ = size;
    d.space_ = space;
  }
  /// Arms a release on a descriptor that holds nothing (a fresh import result): what
  /// SetRelease does, without its checks for a hold to drop first.
  static void Arm(MemoryDescriptor& d, ReleaseFunction release, void* context) noexcept {
    d.release_ = release;
    d.context_ = context;
    d.kind_ = MemoryDescriptor::HoldKind::kRelease;
    LedgerHoldSet();
  }
  /// Gives a descriptor that holds nothing (a fresh import result) `owner` (not null) as its
  /// hold: what SetOwner does, without dropping a previous hold first.
  static void GiveOwner(MemoryDescriptor& d, std::shared_ptr<const void>&& owner) noexcept {
    d.release_ = nullptr;  // written for an Unfilled descriptor
    d.context_ = nullptr;
    new (&d.owner_) std::shared_ptr<const void>(std::move(owner));
    d.kind_ = MemoryDescriptor::HoldKind::kOwner;
    LedgerHoldSet();
  }
  /// Disarms a release hold without calling it.
  static void Disarm(MemoryDescriptor& d) noexcept {
    if (d.kind_ != MemoryDescriptor::HoldKind::kNone) LedgerHoldTaken();
    d.kind_ = MemoryDescriptor::HoldKind::kNone;
    d.release_ = nullptr;
    d.context_ = nullptr;
  }
};

}  // namespace detail
}  // namespace dlbridge
