// ExportPlan: the export's checks once (detail::CheckExport, src/dlpack/to_dlpack.cpp), its block
// as often as needed (detail::AllocateExport, detail::FillExport, src/dlpack/export_internal.h).
#include "dlbridge/export_plan.h"

#include <memory>
#include <string>

#include "core/error_internal.h"
#include "dlpack/export_internal.h"

namespace dlbridge {
namespace {

const char* WhereOf(ExportKind kind) noexcept {
  return kind == ExportKind::kLegacy ? "ToDLPack" : "ToDLPackVersioned";
}

// Why a plan cannot emit: the other kind, or half an allocator. Cold, out of line.
[[noreturn, gnu::cold, gnu::noinline]] void FailEmit(ExportKind kind, ExportKind wanted) {
  const char* where = WhereOf(wanted);
  if (kind != wanted) {
    detail::Fail(ErrorCode::kInvalidArgument,
                 std::string(where) + ": the plan was prepared for " + WhereOf(kind) +
                     ", whose checks differ; prepare one of ExportKind::" +
                     (wanted == ExportKind::kLegacy ? "kLegacy" : "kVersioned"));
  }
  detail::Fail(
      ErrorCode::kInvalidArgument,
      std::string(where) + ": ExportAllocator needs both allocate and deallocate, or neither");
}

template <class Managed>
Managed* Emit(ExportKind kind, ExportKind wanted, const TensorLayout& layout,
              const detail::ExportFacts& facts, KeepAlive keepAlive,
              const ExportAllocator& allocator) {
  // EXP-15: one block per emission, the keep-alive called only by its deleter.
  if (kind != wanted || (allocator.allocate == nullptr) != (allocator.deallocate == nullptr)) {
    FailEmit(kind, wanted);
  }
  const detail::ExportMemory memory =
      detail::AllocateExport<Managed>(WhereOf(wanted), layout.Ndim(), allocator);
  return detail::FillExport<Managed>(memory, facts, layout, keepAlive, nullptr, allocator);
}

// What a plan's checks resolved, for its emissions. They keep no record for import (not
// `proven`: see RT-6): they are Python's and the C API's, each with its own way back.
detail::ExportFacts FactsOf(DLDevice device, uint64_t flags, void* data, uint64_t byte_offset) {
  detail::ExportFacts facts;
  facts.device = device;
  facts.flags = flags;
  facts.data = data;
  facts.byte_offset = byte_offset;
  return facts;
}

}  // namespace

ExportPlan::ExportPlan(const Tensor& tensor, ExportKind kind, const ExportOptions& options)
    : kind_(kind) {
  // EXP-14: the export's own checks and device resolution; the hold is not touched.
  const detail::ExportFacts facts =
      detail::CheckExport(WhereOf(kind), tensor, options, kind == ExportKind::kLegacy);
  layout_ = tensor.layout;  // EXP-16: the plan's own copy
  device_ = facts.device;
  flags_ = kind == ExportKind::kLegacy ? 0 : facts.flags;
  data_ = facts.data;
  byteOffset_ = facts.byte_offset;
}

DLTensor ExportPlan::View() const noexcept {
  DLTensor t{};
  t.data = data_;
  t.device = device_;
  t.ndim = layout_.Ndim();
  t.dtype = layout_.Dtype();
  if (t.ndim > 0) {
    t.shape = const_cast<int64_t*>(layout_.Shape().data);
    t.strides = const_cast<int64_t*>(layout_.Strides().data);
  }
  t.byte_offset = byteOffset_;
  return t;
}

DLManagedTensorVersioned* ExportPlan::EmitVersioned(KeepAlive keep_alive,
                                                    const ExportAllocator& allocator) const {
  return Emit<DLManagedTensorVersioned>(kind_, ExportKind::kVersioned, layout_,
                                        FactsOf(device_, flags_, data_, byteOffset_), keep_alive,
                                        allocator);
}

DLManagedTensor* ExportPlan::EmitLegacy(KeepAlive keep_alive,
                                        const ExportAllocator& allocator) const {
  return Emit<DLManagedTensor>(kind_, ExportKind::kLegacy, layout_,
                               FactsOf(device_, flags_, data_, byteOffset_), keep_alive, allocator);
}

}  // namespace dlbridge
