// The importer's access to TensorLayout: it fills a result's layout in place, once the
// rules (dlpack_rules.h) have checked the producer's shape and strides.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/tensor_layout.h"

namespace dlbridge {
namespace detail {

/// Import fills its result's layout in place: no temporary, and no second round of checks
/// (ndim is in range, shape non-NULL and extents >= 0: CheckShape passed).
struct LayoutAccess {
  static void Fill(TensorLayout& layout, DLDataType dtype, int32_t ndim, const int64_t* shape,
                   const int64_t* strides) {
    layout.dtype_ = dtype;
    if (ndim > TensorLayout::kInlineDims || strides == nullptr || layout.dims_ != layout.inline_) {
      layout.Fill(ndim, shape, strides);  // the heap, contiguous strides, or a used layout
      return;
    }
    // The common case in the importer's own translation unit: inline storage, plain copies.
    int64_t* dims = layout.inline_;
    for (int32_t i = 0; i < ndim; ++i) {
      dims[i] = shape[i];
      dims[ndim + i] = strides[i];
    }
    layout.ndim_ = ndim;
  }
  /// Storage for `ndim` dimensions in a fresh layout (no heap block yet): its inline array,
  /// or (past kInlineDims: see LAY-3) a block the layout now owns and frees, for a fast path
  /// that writes shape and strides while it checks them. nullptr when the layout is not fresh
  /// or the block cannot be allocated (the full path then reports it).
  static int64_t* Storage(TensorLayout& layout, int32_t ndim) noexcept {
    if (layout.dims_ != layout.inline_) return nullptr;
    if (ndim <= TensorLayout::kInlineDims) return layout.inline_;
    auto* dims =
        static_cast<int64_t*>(std::malloc(sizeof(int64_t) * 2 * static_cast<size_t>(ndim)));
    if (dims != nullptr) layout.dims_ = dims;
    return dims;
  }
  /// Completes a layout whose storage Storage returned and the caller filled.
  static void SetInline(TensorLayout& layout, DLDataType dtype, int32_t ndim,
                        uint64_t byte_offset) noexcept {
    layout.dtype_ = dtype;
    layout.ndim_ = ndim;
    layout.byteOffset_ = byte_offset;
  }
};

}  // namespace detail
}  // namespace dlbridge
