// The two halves of every export, shared by ToDLPack* (src/dlpack/to_dlpack.cpp) and ExportPlan
// (src/dlpack/export_plan.cpp): the checks, which resolve everything an export writes besides the
// layout, and the block, allocated first (it may fail) and then filled (it cannot). The block
// is inline here so that both callers build it without a call.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "core/callback_internal.h"
#include "core/descriptor_access_internal.h"
#include "core/error_internal.h"
#include "core/layout_internal.h"
#include "core/ledger_internal.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/checked_math_internal.h"
#include "dlpack/export_rules.h"

namespace dlbridge {
namespace detail {

/// The checks of ToDLPackVersioned (`legacy` false) or ToDLPack (true), spec/validation.md:
/// the space value, a hold (or allow_unowned), flags and dtype, read-only and padded sub-byte
/// for legacy, the device (with the GPU pointer query), the layout inside the buffer and the
/// address space. Throws Error naming `where`; reads the tensor, changes nothing. In
/// src/dlpack/to_dlpack.cpp.
ExportFacts CheckExport(const char* where, const Tensor& tensor, const ExportOptions& options,
                        bool legacy);

/// Throws Error(kOutOfMemory, "<where>: could not <what> the export block"). Cold and out of
/// line, so the emission's passing path carries no message building. In src/dlpack/to_dlpack.cpp.
[[noreturn, gnu::cold, gnu::noinline]] void FailExportBlock(const char* where, const char* what);

/// What a block keeps of an export its fast path proved (ExportFacts::proven), so that import
/// can recognise it unchanged (see RT-6): the DLTensor and flags as written, the span, the
/// first reachable byte, then (after this struct) a private copy of shape and strides that no
/// holder of the managed tensor is given.
struct KeptExport {
  DLTensor shown;
  uint64_t flags;
  ByteSpan span;
  uintptr_t first;
};

/// LT-8, the spare export block (issue 33): blocks of the default allocator for up to kSpareDims
/// dimensions are all kSpareBytes, and each thread keeps the last one it gave back for its next
/// export, instead of calling malloc (malloc and free were a third of a round trip's
/// instructions). Per thread, not one slot for the process: a process-wide slot needs an atomic
/// exchange each way, which cost more time than malloc's own per-thread cache (the export took
/// 30 ns instead of 21). Off in ledger builds (the quarantine must see every free: see LED-6)
/// and under ASan (a reused block would hide a use after the deleter from it).
#if defined(DLBRIDGE_LEDGER) || defined(DLBRIDGE_ASAN)  // DLBRIDGE_ASAN: ledger_internal.h
inline constexpr bool kSpareBlock = false;
#else
inline constexpr bool kSpareBlock = true;
#endif
inline constexpr int32_t kSpareDims = TensorLayout::kInlineDims;

/// Whether an export block from `allocator` for `ndim` dimensions has room for a record
/// (KeptExport, see RT-6): the default allocator's, for up to kSpareDims dimensions (a layout
/// that large is copied, checked and compared dimension by dimension: the record would cost
/// more than the full import it saves).
inline bool RoomForRecord(const ExportAllocator& allocator, int32_t ndim) noexcept {
  return allocator.deallocate == nullptr && ndim <= kSpareDims;
}
/// This thread's spare: the block, whether the thread is ending (its cleaner ran: blocks are
/// freed from then on), and whether the cleaner is registered. Trivially destructible and
/// constant-initialised, so an access needs no guard, and it stays readable after the cleaner.
struct SpareSlot {
  void* block;
  bool ended;
  bool cleaner;
};
/// This thread's SpareSlot. In src/dlpack/spare_slot.cpp, a function of its own: see there.
[[gnu::returns_nonnull]] SpareSlot* ThisThreadSpare() noexcept;

/// Registers this thread's cleaner, which frees its spare when the thread ends (a thread_local
/// with a destructor, touched once per thread). In src/dlpack/to_dlpack.cpp.
void KeepSpareCleaner() noexcept;

/// The calling thread's spare slot when `block` is spare-sized (only such a block can become
/// or be the spare), else nullptr: looked up once per deleter (a thread-local access).
inline SpareSlot* SpareFor(bool spare_sized) noexcept {
  if constexpr (kSpareBlock) return spare_sized ? ThisThreadSpare() : nullptr;
  return nullptr;
}

/// Frees an export block: with a slot (SpareFor), the block becomes this thread's spare and the
/// one it displaces is freed (the last one given back waits: it is the most likely in cache);
/// without, through the ledger (std::free outside ledger builds; see LED-6).
inline void FreeExportBlock(void* block, SpareSlot* spare, bool legacy) noexcept {
  if (kSpareBlock && spare != nullptr && !spare->ended) {
    void* displaced = spare->block;
    spare->block = block;
    if (displaced != nullptr && displaced != block) std::free(displaced);  // no ledger here
    if (!spare->cleaner) KeepSpareCleaner();
    return;
  }
  LedgerFreeExport(block, legacy);
}

/// Copies `pairs` pairs of int64 (at most kSpareDims: a record's ndim) from `from` to `to`,
/// sixteen bytes a step as CopyPairs does, and says whether they equal `expected`'s: one pass
/// instead of a memcmp and a memcpy call (`to` may have been written when they differ).
[[gnu::always_inline]] inline bool CopyPairsIfSame(const int64_t* from, const int64_t* expected,
                                                   int32_t pairs, int64_t* to) noexcept {
  static_assert(kSpareDims <= TensorLayout::kInlineDims, "a record's dims fit a layout inline");
#if defined(__GNUC__) || defined(__clang__)
  using Pair = int64_t __attribute__((vector_size(16)));
  Pair differs = {0, 0};
  for (int32_t i = 0; i < pairs && i < kSpareDims; ++i) {  // more is never a record's
    Pair a;
    Pair b;
    std::memcpy(&a, from + 2 * i, sizeof a);
    std::memcpy(&b, expected + 2 * i, sizeof b);
    differs |= a ^ b;
    std::memcpy(to + 2 * i, &a, sizeof a);
  }
  return (differs[0] | differs[1]) == 0 && pairs <= kSpareDims;
#else
  if (pairs > kSpareDims) return false;  // never a record's (RoomForRecord)
  const size_t bytes = sizeof(int64_t) * 2 * static_cast<size_t>(pairs);
  std::memcpy(to, from, bytes);
  return std::memcmp(from, expected, bytes) == 0;
#endif
}

/// Everything one export needs, in one block: the managed struct first (so the deleter's
/// `self` is the block), then the keep-alive (a release or an owner reference) and how the
/// block is freed, then shape and strides, then (the default allocator's blocks of an export
/// its fast path proved) the KeptExport and its private dims.
template <class Managed>
struct ExportBlock {
  Managed managed;
  ReleaseFunction release;
  void* context;
  void (*deallocate)(void* block, KeepAlive keep_alive);  // null: std::free, then release
  std::shared_ptr<const void> owner;
  int32_t kept_ndim;  // the KeptExport's ndim; -1: the block keeps none
  bool spare_sized;   // kSpareBytes from std::malloc: may become the spare (SpareFor)
  // int64_t dims[2 * ndim] follow the block; then, with kept_ndim >= 0, the KeptExport and
  // int64_t private_dims[2 * kept_ndim].

  int64_t* Dims() noexcept { return reinterpret_cast<int64_t*>(this + 1); }
  KeptExport* Kept() noexcept { return reinterpret_cast<KeptExport*>(Dims() + 2 * kept_ndim); }

  /// Recognises this block's export unchanged (see RT-6): the record of what it wrote when its
  /// version, flags, every DLTensor field (shape and strides still pointing here) and the
  /// shape and strides themselves (against the private copy: the public one is the holder's
  /// to write) are as written, with shape and strides copied to `dims` (room for kSpareDims
  /// dimensions) on the way; nullptr otherwise (`dims` may then have been written), or when
  /// the block keeps no record.
  [[gnu::always_inline]] const KeptExport* Unchanged(int64_t* dims) noexcept {
    const int32_t ndim = kept_ndim;
    if (ndim < 0) return nullptr;
    KeptExport* kept = Kept();
    if constexpr (!std::is_same_v<Managed, DLManagedTensor>) {
      if (managed.version.major != 1 || managed.version.minor != DLPACK_MINOR_VERSION ||
          managed.flags != kept->flags) {
        return nullptr;
      }
    }
    if (std::memcmp(&managed.dl_tensor, &kept->shown, sizeof(DLTensor)) != 0 ||
        !CopyPairsIfSame(Dims(), reinterpret_cast<const int64_t*>(kept + 1), ndim, dims)) {
      return nullptr;
    }
    return kept;
  }

  // Reads only the block's own fields, never the DLTensor (a consumer may have changed it):
  // EXP-12. A second call returns: on the block waiting as this thread's spare (its export
  // ended: ignored, as the ledger would, see LED-4; one that another export took since cannot
  // be told apart, as with memory malloc has handed out again), or wherever a ledger build
  // finds `self` not a live export.
  static void Delete(Managed* self) {
    if (self == nullptr) return;
    auto* block = reinterpret_cast<ExportBlock*>(self);
    SpareSlot* const spare = SpareFor(block->spare_sized);
    if (spare != nullptr && spare->block == block) return;
    if (!LedgerExportDeleting(self, std::is_same_v<Managed, DLManagedTensor>)) return;
    if (block->owner != nullptr) {
      DeleteHeld(block, spare);  // an owner reference to drop: out of line
      return;
    }
    // A release keep-alive (or none): nothing else to destroy.
    const ReleaseFunction release = block->release;
    void* const context = block->context;
    const auto deallocate = block->deallocate;
    if (deallocate != nullptr) {  // frees the block, then drops the keep-alive
      CallDeallocate(deallocate, block, KeepAlive{release, context});
      return;
    }
    FreeExportBlock(block, spare, std::is_same_v<Managed, DLManagedTensor>);
    if (release != nullptr) CallRelease(release, context);
  }

  // Delete for a block that holds an owner reference.
  [[gnu::noinline]] static void DeleteHeld(ExportBlock* block, SpareSlot* spare) noexcept {
    const ReleaseFunction release = block->release;
    void* const context = block->context;
    const auto deallocate = block->deallocate;
    block->~ExportBlock();
    if (deallocate != nullptr) {  // frees the block, then drops the keep-alive
      CallDeallocate(deallocate, block, KeepAlive{release, context});
      return;
    }
    FreeExportBlock(block, spare, std::is_same_v<Managed, DLManagedTensor>);
    if (release != nullptr) CallRelease(release, context);
  }
};

static_assert(alignof(ExportBlock<DLManagedTensorVersioned>) % alignof(int64_t) == 0 &&
                  sizeof(ExportBlock<DLManagedTensorVersioned>) % alignof(int64_t) == 0,
              "dims must be aligned after the block");
static_assert(alignof(ExportBlock<DLManagedTensor>) % alignof(int64_t) == 0 &&
                  sizeof(ExportBlock<DLManagedTensor>) % alignof(int64_t) == 0,
              "dims must be aligned after the legacy block");

/// The size of every spare-sized block: a versioned one (the larger) for kSpareDims.
inline constexpr size_t kSpareBytes = sizeof(ExportBlock<DLManagedTensorVersioned>) +
                                      sizeof(KeptExport) + sizeof(int64_t) * 4 * kSpareDims;
static_assert(sizeof(KeptExport) % alignof(int64_t) == 0, "private dims aligned");
static_assert(sizeof(ExportBlock<DLManagedTensor>) <= sizeof(ExportBlock<DLManagedTensorVersioned>),
              "a legacy block fits a spare-sized one");

/// Copies `pairs` pairs of int64 (ndim's shape then strides are ndim pairs) from `from` to
/// `to` and, unless it is null, `also`: sixteen bytes a step, without a call (ndim is small).
[[gnu::always_inline]] inline void CopyPairs(const int64_t* from, int32_t pairs, int64_t* to,
                                             int64_t* also) noexcept {
  for (int32_t i = 0; i < pairs; ++i) {
    int64_t pair[2];
    std::memcpy(pair, from + 2 * i, sizeof pair);
    std::memcpy(to + 2 * i, pair, sizeof pair);
    if (also != nullptr) std::memcpy(also + 2 * i, pair, sizeof pair);
  }
}

/// The memory of one export block, and whether it is kSpareBytes from std::malloc.
struct ExportMemory {
  void* memory;
  bool spare_sized;
};

/// One export block for `ndim` dimensions from `allocator` (std::malloc, or the spare, when it
/// has none), recorded in the ledger. Throws Error(kOutOfMemory) naming `where`; nothing is
/// kept then.
template <class Managed>
ExportMemory AllocateExport(const char* where, int32_t ndim, const ExportAllocator& allocator) {
  // Room for the record where it is kept (see RT-6); a caller's allocator (Python's pool) and
  // larger layouts get the public part only.
  const bool room = RoomForRecord(allocator, ndim);
  const size_t bytes = sizeof(ExportBlock<Managed>) +
                       sizeof(int64_t) * static_cast<size_t>(ndim) * (room ? 4 : 2) +
                       (room ? sizeof(KeptExport) : 0);
  if (kSpareBlock && room) {
    SpareSlot& spare = *ThisThreadSpare();
    void* memory = spare.block;
    if (memory != nullptr) {
      spare.block = nullptr;
    } else {
      memory = std::malloc(kSpareBytes);
    }
    if (memory == nullptr) FailExportBlock(where, "allocate");
    return {memory, true};  // no ledger in these builds
  }
  void* memory = allocator.allocate != nullptr ? allocator.allocate(bytes) : std::malloc(bytes);
  if (memory == nullptr) FailExportBlock(where, "allocate");
  if (!LedgerExportCreated(memory)) {  // ledger builds only; always true otherwise
    if (allocator.deallocate != nullptr) {
      CallDeallocate(allocator.deallocate, memory, KeepAlive{});
    } else {
      std::free(memory);
    }
    FailExportBlock(where, "record");
  }
  return {memory, false};
}

/// Writes the managed tensor into a block from AllocateExport with the same `allocator`:
/// `facts` and `layout` (shape and strides copied). It is kept alive by `*owner` when `owner`
/// is given (moved in; manager_ctx is then the block), else by `keep_alive` (manager_ctx its
/// context); the deleter frees the block and then calls the keep-alive once (both through
/// `allocator.deallocate` when it has one).
template <class Managed>
[[gnu::always_inline]] inline Managed* FillExport(ExportMemory memory, const ExportFacts& facts,
                                                  const TensorLayout& layout, KeepAlive keep_alive,
                                                  std::shared_ptr<const void>* owner,
                                                  const ExportAllocator& allocator) noexcept {
  using Block = ExportBlock<Managed>;
  Block* block = new (memory.memory) Block;  // the DLPack structs stay uninitialised: all set below
  block->spare_sized = memory.spare_sized;
  Managed& m = block->managed;
  if constexpr (!std::is_same_v<Managed, DLManagedTensor>) {
    m.version.major = 1;  // EXP-4
    m.version.minor = DLPACK_MINOR_VERSION;
    m.flags = facts.flags;
  }
  DLTensor& t = m.dl_tensor;
  const int32_t ndim = layout.Ndim();
  t.data = facts.data;
  t.device = facts.device;
  t.ndim = ndim;
  t.dtype = layout.Dtype();
  t.byte_offset = facts.byte_offset;
  int64_t* dims = block->Dims();
  const int64_t* source = layout.Shape().data;
  // EXP-5: strides always written out.
  t.shape = ndim > 0 ? dims : nullptr;
  t.strides = ndim > 0 ? dims + ndim : nullptr;
  if (facts.proven && RoomForRecord(allocator, ndim) &&
      (owner != nullptr || keep_alive.release != nullptr)) {
    // What was written, for import to recognise (see RT-6), where AllocateExport made room, and
    // only with a hold (a block without one has none to give back); shape and strides to both
    // copies in one pass.
    block->kept_ndim = ndim;
    KeptExport* kept = block->Kept();
    kept->shown = t;
    if constexpr (!std::is_same_v<Managed, DLManagedTensor>) kept->flags = facts.flags;
    kept->span = facts.span;
    kept->first = facts.first;
    CopyPairs(source, ndim, dims, reinterpret_cast<int64_t*>(kept + 1));
  } else {
    block->kept_ndim = -1;
    std::memcpy(dims, source, sizeof(int64_t) * 2 * static_cast<size_t>(ndim));
  }
  block->deallocate = allocator.deallocate;
  if (owner != nullptr) {
    block->owner = std::move(*owner);
    block->release = nullptr;
    block->context = nullptr;
    m.manager_ctx = block;
  } else {
    block->release = keep_alive.release;
    block->context = keep_alive.context;
    m.manager_ctx = keep_alive.context;
  }
  m.deleter = &Block::Delete;
  return &m;
}

/// Import's recognition of one of its own exports (see RT-6): the block of `managed` when its
/// deleter is this block type's and the block keeps a record (FillExport: the default
/// allocator, an export its fast path proved, a hold to give back); nullptr otherwise, and the
/// import then runs as for any producer. Reads the block's own fields only.
template <class Managed>
[[gnu::always_inline]] inline ExportBlock<Managed>* OwnExport(Managed& managed) noexcept {
  if (managed.deleter != &ExportBlock<Managed>::Delete) return nullptr;
  auto* block = reinterpret_cast<ExportBlock<Managed>*>(&managed);
  return block->kept_ndim >= 0 ? block : nullptr;
}

/// Ends an export that import recognised (see RT-6) instead of its deleter: the keep-alive moves
/// into `descriptor` (a fresh import result that holds nothing) and the block is freed. False,
/// with nothing changed, when a ledger build finds the block not live (see LED-4): the import
/// then runs the full way, and the deleter's later call is reported.
template <class Managed>
bool TakeBackExport(ExportBlock<Managed>* block, MemoryDescriptor& descriptor) noexcept {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  if (!LedgerExportDeleting(block, kLegacy)) return false;
  if (block->owner != nullptr) {
    DescriptorAccess::GiveOwner(descriptor, std::move(block->owner));
  } else {
    DescriptorAccess::Arm(descriptor, block->release, block->context);
  }
  SpareSlot* const spare = SpareFor(block->spare_sized);
  block->~ExportBlock();
  FreeExportBlock(block, spare, kLegacy);
  return true;
}

}  // namespace detail
}  // namespace dlbridge
