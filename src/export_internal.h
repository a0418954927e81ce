// The two halves of every export (src/to_dlpack.cpp), shared by ToDLPack* and ExportPlan
// (src/export_plan.cpp): the checks, which resolve everything an export writes besides the
// layout, and the block, allocated first (it may fail) and then filled (it cannot).
#pragma once

#include <cstdint>
#include <memory>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
#include "dlbridge/to_dlpack.h"

namespace dlbridge {
namespace detail {

/// What the export checks resolved.
struct ExportFacts {
  DLDevice device{};         ///< The resolved device (spec/device-map.md).
  uint64_t flags = 0;        ///< What a versioned export publishes.
  void* data = nullptr;      ///< The descriptor's pointer; null without elements.
  uint64_t byte_offset = 0;  ///< The layout's; 0 without elements.
};

/// The checks of ToDLPackVersioned (`legacy` false) or ToDLPack (true), spec/validation.md:
/// flags and dtype, read-only and padded sub-byte for legacy, the device (with the GPU pointer
/// query), the layout inside the buffer. Throws Error naming `where`; reads the tensor,
/// changes nothing.
ExportFacts CheckExport(const char* where, const Tensor& tensor, const ExportOptions& options,
                        bool legacy);

/// One export block for `ndim` dimensions from `allocator` (std::malloc when it has none),
/// recorded in the ledger. Throws Error(kOutOfMemory) naming `where`; nothing is kept then.
template <class Managed>
void* AllocateExport(const char* where, int32_t ndim, const ExportAllocator& allocator);

/// Writes the managed tensor into a block from AllocateExport (which `allocator.deallocate`,
/// or std::free, frees): `facts` and `layout` (shape and strides copied), kept alive by
/// `owner` when it is set (manager_ctx is then the block) and by `keep_alive` (manager_ctx its
/// context) otherwise; the deleter frees the block and then calls the keep-alive once.
template <class Managed>
Managed* FillExport(void* memory, const ExportFacts& facts, const TensorLayout& layout,
                    KeepAlive keep_alive, std::shared_ptr<const void> owner,
                    const ExportAllocator& allocator) noexcept;

extern template void* AllocateExport<DLManagedTensorVersioned>(const char*, int32_t,
                                                               const ExportAllocator&);
extern template void* AllocateExport<DLManagedTensor>(const char*, int32_t, const ExportAllocator&);
extern template DLManagedTensorVersioned* FillExport<DLManagedTensorVersioned>(
    void*, const ExportFacts&, const TensorLayout&, KeepAlive, std::shared_ptr<const void>,
    const ExportAllocator&) noexcept;
extern template DLManagedTensor* FillExport<DLManagedTensor>(void*, const ExportFacts&,
                                                             const TensorLayout&, KeepAlive,
                                                             std::shared_ptr<const void>,
                                                             const ExportAllocator&) noexcept;

}  // namespace detail
}  // namespace dlbridge
