/// @file
/// Copies between host and GPU memory through the GPU runtimes dlbridge loads with dlopen
/// (CUDA's driver, HIP, Level Zero): CopyTo makes a new C-contiguous tensor on a target device
/// from any tensor dlbridge can export. spec/copies.md (CPY-*) has the rules.
#pragma once

#include <cstdint>
#include <optional>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/tensor.h"
#include "dlbridge/to_dlpack.h"

namespace dlbridge {

/// How CopyTo queues and waits for a copy.
struct CopyOptions {
  /// The stream the copy is queued on, as a Python DLPack stream value of the runtime that runs
  /// it (the GPU side of the copy; CheckStreamValue's values): CUDA 1 (legacy default), 2
  /// (per-thread default), > 2 a CUstream; ROCm 0 (null stream), > 2 a hipStream_t. Empty: that
  /// runtime's default stream (CUDA 1, ROCm 0). -1 is refused: a copy is queued somewhere. Not
  /// read for host-to-host and Level Zero copies (Level Zero copies run on an immediate
  /// command list of their own).
  std::optional<int64_t> stream;
  /// The stream on which the source's writes may still be pending (same values; -1: nothing
  /// pending). Empty: the source's Tensor::stream for CopyTo(const Tensor&, ...), nothing for
  /// CopyTo(const ExportPlan&, ...). The copy's stream is ordered after it first
  /// (OrderStreams); a copy the host does itself (source memory the CPU reads) waits for it.
  std::optional<int64_t> producer_stream;
  /// true: CopyTo returns once the copy is complete. false: a copy to GPU memory may return
  /// once it is queued, and the result's Tensor::stream then names the stream it is pending on
  /// (order a consumer after it with OrderStreams). A copy to host memory (kDLCPU) always
  /// completes before CopyTo returns and its result carries no stream: the host reads it, and
  /// no stream orders the host. A copy that needs a host staging buffer (a strided GPU source or
  /// target, a host-to-host copy) always completes before CopyTo returns.
  bool synchronous = true;
  /// Level Zero: the context of the source and the target (null: the one registered with
  /// SetLevelZeroContext).
  void* level_zero_context = nullptr;
  /// Level Zero: the device a new allocation is made on and the copy runs on (null: the
  /// registered one).
  void* level_zero_device = nullptr;
};

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

}  // namespace dlbridge
