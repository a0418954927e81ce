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
#include "core/error_internal.h"
#include "core/ledger_internal.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
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

/// Everything one export needs, in one block: the managed struct first (so the deleter's
/// `self` is the block), then the keep-alive (a release or an owner reference) and how the
/// block is freed, then shape and strides.
template <class Managed>
struct ExportBlock {
  Managed managed;
  ReleaseFunction release;
  void* context;
  void (*deallocate)(void* block, KeepAlive keep_alive);  // null: std::free, then release
  std::shared_ptr<const void> owner;
  // int64_t dims[2 * ndim] follow the block.

  int64_t* Dims() noexcept { return reinterpret_cast<int64_t*>(this + 1); }

  // Reads only the block's own fields, never the DLTensor (a consumer may have changed it):
  // EXP-12. Ledger builds first ask whether `self` is a live export: a second call returns.
  static void Delete(Managed* self) {
    if (self == nullptr) return;
    if (!LedgerExportDeleting(self, std::is_same_v<Managed, DLManagedTensor>)) return;
    auto* block = reinterpret_cast<ExportBlock*>(self);
    const ReleaseFunction release = block->release;
    void* const context = block->context;
    const auto deallocate = block->deallocate;
    block->~ExportBlock();
    if (deallocate != nullptr) {  // frees the block, then drops the keep-alive
      CallDeallocate(deallocate, block, KeepAlive{release, context});
      return;
    }
    LedgerFreeExport(block, std::is_same_v<Managed, DLManagedTensor>);  // see LED-6
    if (release != nullptr) CallRelease(release, context);
  }
};

static_assert(alignof(ExportBlock<DLManagedTensorVersioned>) % alignof(int64_t) == 0 &&
                  sizeof(ExportBlock<DLManagedTensorVersioned>) % alignof(int64_t) == 0,
              "dims must be aligned after the block");
static_assert(alignof(ExportBlock<DLManagedTensor>) % alignof(int64_t) == 0 &&
                  sizeof(ExportBlock<DLManagedTensor>) % alignof(int64_t) == 0,
              "dims must be aligned after the legacy block");

/// One export block for `ndim` dimensions from `allocator` (std::malloc when it has none),
/// recorded in the ledger. Throws Error(kOutOfMemory) naming `where`; nothing is kept then.
template <class Managed>
void* AllocateExport(const char* where, int32_t ndim, const ExportAllocator& allocator) {
  const size_t bytes =
      sizeof(ExportBlock<Managed>) + sizeof(int64_t) * 2 * static_cast<size_t>(ndim);
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
  return memory;
}

/// Writes the managed tensor into a block from AllocateExport with the same `allocator`:
/// `facts` and `layout` (shape and strides copied). It is kept alive by `*owner` when `owner`
/// is given (moved in; manager_ctx is then the block), else by `keep_alive` (manager_ctx its
/// context); the deleter frees the block and then calls the keep-alive once (both through
/// `allocator.deallocate` when it has one).
template <class Managed>
Managed* FillExport(void* memory, const ExportFacts& facts, const TensorLayout& layout,
                    KeepAlive keep_alive, std::shared_ptr<const void>* owner,
                    const ExportAllocator& allocator) noexcept {
  using Block = ExportBlock<Managed>;
  Block* block = new (memory) Block;  // the DLPack structs stay uninitialised: all set below
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
  if (ndim > 0) {  // EXP-5: strides always written out
    int64_t* dims = block->Dims();
    std::memcpy(dims, layout.Shape().data, sizeof(int64_t) * 2 * static_cast<size_t>(ndim));
    t.shape = dims;
    t.strides = dims + ndim;
  } else {
    t.shape = nullptr;
    t.strides = nullptr;
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

}  // namespace detail
}  // namespace dlbridge
