/// @file
/// The option structs of export, import and copies (ExportOptions, ImportOptions,
/// CopyOptions): values, below every header that takes them, so that a header reading an
/// option (the fast recognisers, ExportPlan, the copies) does not include a converter.
#pragma once

#include <cstdint>
#include <optional>

#include "dlbridge/device_verification.h"

namespace dlbridge {

class MetalResolver;  // dlbridge/metal_resolver.h

/// How ToDLPackVersioned and ToDLPack export; the defaults suit host memory.
struct ExportOptions {
  /// Set DLPACK_FLAG_BITMASK_READ_ONLY (also set when tensor.flags has it). IS_COPIED in
  /// tensor.flags is never published: the consumer's data is not a copy dlbridge made.
  bool read_only = false;
  /// GPU ordinal when tensor.device names none; -1 = not given: then it is read from the
  /// pointer through the space's runtime where one is loaded (spec/device-map.md, see GPU-2),
  /// and Error(kMissingDeviceId) when no runtime can say. An id that contradicts
  /// tensor.device, or one above 0 for a device type whose id is always 0, is
  /// Error(kDeviceMismatch).
  int32_t device_id = -1;
  /// Level Zero: the ze_context_handle_t and ze_device_handle_t the pointer belongs to.
  /// Both are required for "level_zero" (here or once per process with SetLevelZeroContext):
  /// its pointers mean nothing without the context (Error(kMissingContext)).
  void* level_zero_context = nullptr;
  /// Level Zero: the ze_device_handle_t; see level_zero_context.
  void* level_zero_device = nullptr;
  /// Whether a given device id is checked against the pointer's runtime (see GPU-5). kOff with a
  /// given id runs no pointer query at all.
  DeviceVerification verify_device = DeviceVerification::kWhereAvailable;
  /// Export a descriptor that holds nothing (no owner, no release). Off by default: such an
  /// export fails with Error(kNoHold), since nothing would keep the memory alive for the
  /// consumer. Set it only when the caller keeps the memory valid until the deleter runs.
  bool allow_unowned = false;
  /// Emit the descriptor's pointer as `data` and the layout's byte offset as `byte_offset`.
  /// Off by default: for device types whose pointers allow address arithmetic (the device
  /// table's `address_arithmetic`: CPU, CUDA, ROCm, oneAPI and their host/managed kinds),
  /// `data` is element zero's address and `byte_offset` 0, as NumPy, PyTorch and CuPy export
  /// (PyTorch ignores a non-zero byte_offset). Other device types always keep the split.
  bool keep_byte_offset = false;
};

/// How FromDLPack imports: what it requires of the tensor, and the contexts it may need.
struct ImportOptions {
  /// Reject read-only input (Error(kReadOnly)).
  bool require_writable = false;
  /// Treat legacy tensors (which cannot say read-only) as read-only.
  bool legacy_read_only = false;
  /// Accept NULL strides (as C-contiguous) from DLPack >= 1.2 producers, which the
  /// header forbids for ndim > 0.
  bool allow_null_strides = false;
  /// Level Zero context the kDLOneAPI pointer belongs to (null = the process-wide one from
  /// SetLevelZeroContext); without either, kDLOneAPI is rejected (Error(kMissingContext)).
  void* level_zero_context = nullptr;
  /// Resolves kDLMetal buffers; null = the process-wide one (SetMetalResolver). Without
  /// either, kDLMetal is rejected (Error(kMissingContext)).
  const MetalResolver* metal_resolver = nullptr;
  /// Checks kDLCUDA, kDLCUDAManaged, kDLROCM and kDLOneAPI pointers against their runtime
  /// (kind, and ordinal == device_id) where it is loaded: a contradiction is
  /// Error(kDeviceMismatch), a pointer the runtime does not know Error(kUnknownPointer). kOff
  /// runs no query (see GPU-5, see GPU-8); kRequired also fails, with the runtime's error
  /// (e.g. kRuntimeUnavailable), where it cannot answer.
  DeviceVerification verify_device = DeviceVerification::kWhereAvailable;
};

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

}  // namespace dlbridge
