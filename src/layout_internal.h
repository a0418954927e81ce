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
    layout.Fill(ndim, shape, strides);
    layout.dtype_ = dtype;
  }
};

}  // namespace detail
}  // namespace dlbridge
