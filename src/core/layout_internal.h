// The importer's access to TensorLayout: it fills a result's layout in place, once the
// rules (dlpack_rules.h) have checked the producer's shape and strides.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/checked_math_internal.h"

namespace dlbridge {
namespace detail {

/// Import fills its result's layout in place: no temporary, and no second round of checks
/// (ndim is in range, shape non-NULL and extents >= 0: CheckShape passed).
struct LayoutAccess {
  /// An import's result before the importer writes it: inline storage and ndim 0, the rest
  /// unwritten. The importer writes it (Begin, Storage, Complete), or assigns a new layout,
  /// before anything reads it.
  static TensorLayout Unfilled() noexcept { return TensorLayout(TensorLayout::Unfilled{}); }
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
    layout.KeepSpan();
  }
  /// Storage for `ndim` dimensions in an Unfilled layout (inline storage, asked once): its
  /// inline array, or (past kInlineDims: see LAY-3) a block the layout now owns and frees, for
  /// a fast path that writes shape and strides while it checks them. nullptr when the block
  /// cannot be allocated (the full path then reports it).
  static int64_t* Storage(TensorLayout& layout, int32_t ndim) noexcept {
    if (ndim <= TensorLayout::kInlineDims) return layout.inline_;
    auto* dims =
        static_cast<int64_t*>(std::malloc(sizeof(int64_t) * 2 * static_cast<size_t>(ndim)));
    if (dims != nullptr) layout.dims_ = dims;
    return dims;
  }
  /// The dtype and number of dimensions of an Unfilled layout, whose storage (Storage) the
  /// caller fills.
  static void Begin(TensorLayout& layout, DLDataType dtype, int32_t ndim) noexcept {
    layout.dtype_ = dtype;
    layout.ndim_ = ndim;
  }
  /// Completes a layout that Begin began and whose storage Storage returned and the caller
  /// filled, with the span FastSpan computed while filling it (so that the layout keeps it, as
  /// KeepSpan would).
  static void Complete(TensorLayout& layout, uint64_t byte_offset, const ByteSpan& span) noexcept {
    layout.byteOffset_ = byte_offset;
    layout.spanCount_ = span.count;
    layout.spanLow_ = span.low;
    layout.spanBytes_ = span.bytes;
  }
  /// The span the layout keeps (FastSpan's for its dtype, shape and strides): false when it
  /// is not known, and the caller then runs FastSpan or the rules itself.
  static bool KeptSpan(const TensorLayout& layout, ByteSpan* span) noexcept {
    if (layout.spanBytes_ < 0) return false;
    span->count = layout.spanCount_;
    span->low = layout.spanLow_;
    span->bytes = layout.spanBytes_;
    return true;
  }
};

}  // namespace detail
}  // namespace dlbridge
