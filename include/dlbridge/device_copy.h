/// @file
/// Copies between host and GPU memory through the GPU runtimes dlbridge loads with dlopen
/// (CUDA's driver, HIP, Level Zero): CopyTo makes a new C-contiguous tensor on a target device
/// from any tensor dlbridge can export, and CopyToHost one in host memory. spec/copies.md (CPY-*)
/// has the rules.
#pragma once

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"

namespace dlbridge {

/// A copy of what `plan` describes, in new memory on `target`: a C-contiguous tensor of the
/// plan's dtype and shape (sub-byte dtypes packed, as AllocateHostTensor packs them), byte
/// offset 0, flags 0, device `target`, memory space "host" for kDLCPU, "cuda" for kDLCUDA,
/// "hip" for kDLROCM, "level_zero" for kDLOneAPI. The source may be any memory the plan
/// describes on those types (or pinned / managed memory: kDLCUDAHost, kDLCUDAManaged,
/// kDLROCMHost, which the host copies directly); host to GPU, GPU to host and GPU to GPU on one
/// device through the runtime's copy calls; strides (negative and zero ones too) are gathered
/// through a host staging buffer where the source is not C-contiguous. The new memory is 256-byte
/// aligned. The plan's memory must stay valid until the copy completes.
///
/// Ownership, on success: the result's descriptor holds the new memory with a release that
/// frees it through the runtime that allocated it (cuMemFree in the device's primary context,
/// which the allocation keeps retained; hipFree; zeMemFree; for "host", the library's aligned
/// free), exactly once, on whichever thread drops the last hold. The source is not changed.
///
/// On failure: throws Error and leaves nothing allocated (every allocation, staging buffer and
/// event freed; the CUDA context stack and the HIP current device as they were): kUnsupportedDevice
/// (a target or source CopyTo cannot copy to or from, naming the accepted ones; GPU to GPU
/// across devices or runtimes), kDeviceMismatch (a target id that is no device; a kDLOneAPI
/// id other than the index of the Level Zero device the copy allocates on), kInvalidArgument (a
/// stream value CheckStreamValue refuses, naming "stream" or "producer_stream"), kMissingContext
/// (Level Zero without a context or device), the runtime's code when it cannot be used
/// (kRuntimeUnavailable, kStubLibrary, kNoDevice, kRuntimeNotInitialized), kRuntimeUnavailable
/// naming the runtime call that failed and its error, kOverflow, kOutOfMemory (host memory).
DLBRIDGE_API Tensor CopyTo(const ExportPlan& plan, DLDevice target,
                           const CopyOptions& options = {});

/// CopyTo of `tensor`, validated first exactly as ToDLPackVersioned(tensor, export_options)
/// validates it (ExportPlan; its hold is not needed: allow_unowned is set, since the copy is
/// made before this returns). The source's pending writes are `options.producer_stream`, else
/// `tensor.stream`. Ownership as for CopyTo(const ExportPlan&, ...); `tensor` and its hold are
/// never changed.
DLBRIDGE_API Tensor CopyTo(const Tensor& tensor, DLDevice target, const CopyOptions& options = {},
                           const ExportOptions& export_options = {});

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
