/// @file
/// Import: any DLPack managed tensor becomes a Tensor whose release is the tensor's deleter.
#pragma once

#include "dlbridge/dlpack_header.h"

#include "dlbridge/device_verification.h"
#include "dlbridge/export.h"
#include "dlbridge/metal_resolver.h"
#include "dlbridge/tensor.h"

namespace dlbridge {

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
  /// SetLevelZeroContext); without either, kDLOneAPI is rejected.
  void* level_zero_context = nullptr;
  /// Resolves kDLMetal buffers; null = the process-wide one (SetMetalResolver), if any.
  const MetalResolver* metal_resolver = nullptr;
  /// Checks kDLCUDA, kDLCUDAManaged, kDLROCM and kDLOneAPI pointers against their runtime
  /// (kind, and ordinal == device_id) where it is loaded; kOff runs no query (see GPU-5,
  /// see GPU-8).
  DeviceVerification verify_device = DeviceVerification::kWhereAvailable;
};

/// Imports a versioned tensor. Always consumes `managed` (when non-null):
///  - on success, the result's descriptor holds a release whose context is `managed` and
///    whose single call runs `managed->deleter(managed)`; a NULL deleter gives no hold;
///  - on failure, `managed->deleter` is called exactly once before Error is thrown.
/// A major version other than 1 is rejected touching nothing but version, deleter and flags.
/// The deleter must not throw; one that does still counts as run once (dlbridge/callbacks.h).
/// The descriptor spans exactly the bytes the tensor can reach; the layout is relative to it.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensorVersioned* managed,
                               const ImportOptions& options = {});

/// Imports a legacy tensor, with the same ownership rules. NULL strides mean C-contiguous.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensor* managed, const ImportOptions& options = {});

}  // namespace dlbridge
