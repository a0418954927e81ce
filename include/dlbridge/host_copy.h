/// @file
/// Host tensors: a new C-contiguous tensor in 256-byte aligned host memory. Copies into one
/// (CopyToHost) are declared beside CopyTo, in dlbridge/device_copy.h.
#pragma once

#include <cstdint>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/tensor.h"

namespace dlbridge {

/// A new tensor of `dtype` and `shape` (`ndim` extents; NULL when ndim is 0) in new,
/// uninitialised host memory from std::malloc, starting on a 256-byte boundary: C-contiguous, byte
/// offset 0, device {kDLCPU, 0}, flags 0 (writable), memory space "host". The descriptor holds the
/// memory with a release that frees it (std::free of the block it came from), so the memory lives
/// until the tensor (or an export of it) drops its hold. Sub-byte dtypes (int1/2/4, uint1/2/4,
/// float4/6, and lanes that make an element a fraction of bytes) are packed: their bits rounded up
/// to whole bytes; a tensor without elements still gets a (one-byte) block and describes 0 bytes.
///
/// Throws Error: kInvalidDtype or kUnsupportedDtype (the export's dtype rule), kInvalidShape (ndim
/// outside 0..TensorLayout::kMaxDims, a NULL shape, a negative extent), kOverflow (the element
/// count or the size in bytes passes int64; the message names the extent, or the dtype and count),
/// kOutOfMemory. Nothing is allocated then.
DLBRIDGE_API Tensor AllocateHostTensor(DLDataType dtype, int32_t ndim, const int64_t* shape);

}  // namespace dlbridge
