// The importer's access to TensorLayout: it fills a result's layout in place, once the
// rules (dlpack_rules.h) have checked the producer's shape and strides.
#pragma once

#include <cstdint>

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
    if (ndim > TensorLayout::kInlineDims || strides == nullptr ||
        layout.dims_ != layout.inline_) {
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
};

}  // namespace detail
}  // namespace dlbridge
