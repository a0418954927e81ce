/// @file
/// Host tensors: a new C-contiguous tensor in 256-byte aligned host memory, and a copy of any
/// tensor dlbridge can read (host memory directly, GPU memory through its runtime) into one.
#pragma once

#include <cstdint>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/options.h"
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

/// A copy of what `plan` describes into a new AllocateHostTensor of its dtype and shape
/// (C-contiguous, writable, {kDLCPU, 0}; strides, negative and zero ones included, are
/// followed element by element). Sub-byte elements are copied bit by bit into the packed
/// form (little bit-endian, as the DLPack header defines it), from a packed source or from
/// one padded to a byte per element (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED); the copy's
/// flags are 0 (packed). Memory the CPU reads at its own address (IsHostAccessible: host,
/// pinned and managed memory) is read on the calling thread; any other memory (GPU memory) is
/// copied down by its runtime, exactly as CopyTo(plan, {kDLCPU, 0}) (dlbridge/device_copy.h)
/// copies it, synchronously on the runtime's default stream. The plan's memory must still be
/// valid and its pending writes complete (for an ordered copy, use CopyTo with
/// CopyOptions::producer_stream).
///
/// Throws Error: kOverflow when the copy's size passes int64, kOutOfMemory, and for GPU memory
/// CopyTo's errors (the runtime cannot be used, a runtime call failed, kUnsupportedDevice for
/// memory neither the host nor a runtime can read). Nothing is allocated then.
DLBRIDGE_API Tensor CopyToHost(const ExportPlan& plan);

/// A copy of `tensor`, validated first exactly as ToDLPackVersioned(tensor, options) would
/// validate it (the same Error for the same input, e.g. kOutOfBounds for a layout outside its
/// buffer; ExportPlan), then copied as CopyToHost(const ExportPlan&) copies. `tensor` and its
/// hold are not changed.
DLBRIDGE_API Tensor CopyToHost(const Tensor& tensor, const ExportOptions& options = {});

}  // namespace dlbridge
