/// @file
/// A prepared export: a Tensor checked for export once, without moving its hold, then emitted
/// as DLPack managed tensors as often as needed, each kept alive by a keep-alive of its own.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dlbridge/callbacks.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"

namespace dlbridge {

/// Which DLPack struct a plan emits, and so which export's checks it ran.
enum class ExportKind : unsigned char {
  kVersioned = 0,  ///< DLManagedTensorVersioned, checked as ToDLPackVersioned checks.
  kLegacy = 1,     ///< DLManagedTensor, checked as ToDLPack checks.
};

/// A tensor validated for export, with its device resolved, that emits managed tensors.
///
/// Preparing runs every check of ToDLPackVersioned (kVersioned) or ToDLPack (kLegacy) on a
/// `const Tensor&` and resolves the device the same way, including the GPU runtime's pointer
/// query for a missing device id; it throws the same Error (code and message) those exports
/// throw for the same input, kNoHold included: a descriptor that holds nothing needs
/// ExportOptions::allow_unowned here too, though the emissions' keep-alives are the caller's.
/// The tensor's hold is never touched: the caller keeps it.
///
/// What the plan copies, so that it never reads the tensor again: the layout (dtype, shape,
/// strides; heap-allocated past TensorLayout::kInlineDims dimensions), the resolved device,
/// the flags an export publishes, and `data` and `byte_offset` as the exports emit them
/// (element zero's address and 0 unless ExportOptions::keep_byte_offset; both 0 for a tensor
/// without elements). An emission after the tensor changed, moved or
/// was destroyed therefore describes the tensor as it was when prepared; keeping the memory
/// valid is the keep-alive's job. Prepare again after a change.
///
/// Each emission is one allocation. Emitting is const and touches no shared state, so one
/// plan may emit from several threads at once. A plan never hands back an import's original
/// tensor the way ToDLPackVersioned's re-export does: every emission is a new tensor.
class DLBRIDGE_API ExportPlan {
 public:
  /// Checks `tensor` for an export of `kind` with `options` and resolves its device.
  /// On failure throws Error, exactly as ToDLPackVersioned (kVersioned) or ToDLPack (kLegacy)
  /// would for the same tensor and options; also Error(kOutOfMemory) when a layout of more
  /// than TensorLayout::kInlineDims dimensions cannot be copied. `tensor` is never changed.
  explicit ExportPlan(const Tensor& tensor, ExportKind kind = ExportKind::kVersioned,
                      const ExportOptions& options = {});

  /// What the plan emits.
  ExportKind Kind() const noexcept { return kind_; }
  /// The device every emission carries (resolved as ToDLPack* resolve it).
  DLDevice Device() const noexcept { return device_; }
  /// The flags a versioned emission carries (READ_ONLY when asked or inherited, never
  /// IS_COPIED); 0 for a legacy plan.
  uint64_t Flags() const noexcept { return flags_; }
  /// The emitted `data`: element zero's address (the descriptor's pointer with
  /// ExportOptions::keep_byte_offset), or nullptr when there are no elements.
  void* Data() const noexcept { return data_; }
  /// The emitted `byte_offset`: 0 (the layout's with ExportOptions::keep_byte_offset), or 0
  /// when there are no elements.
  uint64_t ByteOffset() const noexcept { return byteOffset_; }
  /// The copied layout: dtype, shape and strides the emissions carry.
  const TensorLayout& Layout() const noexcept { return layout_; }
  /// A non-owning DLTensor of what an emission carries; its shape and strides point into
  /// this plan and are valid while the plan lives unchanged.
  DLTensor View() const noexcept;

  /// Emits a new DLManagedTensorVersioned ({1, DLPACK_MINOR_VERSION}, Flags()).
  ///
  /// Ownership, on success: the result owns `keep_alive`. The consumer calls its `deleter`
  /// exactly once, on any thread: it frees the tensor and then calls
  /// `keep_alive.release(keep_alive.context)`, once (both through `allocator.deallocate` when
  /// given). `manager_ctx` is `keep_alive.context`. One allocation (through
  /// `allocator.allocate` when given).
  ///
  /// On failure: throws Error(kOutOfMemory) when the block cannot be allocated, or
  /// Error(kInvalidArgument) when the plan is kLegacy or the allocator gives only one of its
  /// two functions. `keep_alive.release` is NOT called then: the caller still holds what
  /// it kept alive and must drop it itself.
  DLManagedTensorVersioned* EmitVersioned(KeepAlive keep_alive,
                                          const ExportAllocator& allocator = {}) const;

  /// Emits a new legacy DLManagedTensor. Ownership on success and on failure as for
  /// EmitVersioned; throws Error(kInvalidArgument) when the plan is kVersioned.
  DLManagedTensor* EmitLegacy(KeepAlive keep_alive, const ExportAllocator& allocator = {}) const;

 private:
  TensorLayout layout_;
  DLDevice device_{};
  uint64_t flags_ = 0;
  void* data_ = nullptr;
  uint64_t byteOffset_ = 0;
  ExportKind kind_;
};

}  // namespace dlbridge
