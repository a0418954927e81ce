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

/// Imports a versioned tensor. Always consumes a non-null `managed`:
///  - on success, the result's descriptor holds a release whose context is `managed` and
///    whose single call runs `managed->deleter(managed)`; a NULL deleter gives no hold;
///  - on failure, `managed->deleter` (when non-NULL) is called exactly once, then Error is
///    thrown: the import's own Error even when the deleter throws.
/// A null `managed` is Error(kInvalidArgument), with nothing to consume.
/// A major version other than 1 is Error(kUnsupportedVersion), read no further than `flags`.
/// The other errors name the field: kInvalidFlags, kInvalidShape, kInvalidStrides,
/// kInvalidDtype, kUnsupportedDtype, kUnsupportedDevice, kDeviceMismatch (a negative
/// device_id), kNullData, kOverflow, kReadOnly, kMissingContext, kInvalidArgument and
/// kOutOfBounds (a Metal buffer unknown to the resolver, or too short), and those of
/// ImportOptions::verify_device (spec/validation.md lists each rule).
/// The deleter must not throw; one that does still counts as run once (dlbridge/callbacks.h).
/// The descriptor spans exactly the bytes the tensor can reach; the layout is relative to it.
/// A tensor without elements describes 0 bytes at pointer 0, whatever its `data`.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensorVersioned* managed,
                               const ImportOptions& options = {});

/// Imports a legacy tensor, with the same ownership rules and errors (no version to check).
/// NULL strides mean C-contiguous; ImportOptions::legacy_read_only marks it read-only.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensor* managed, const ImportOptions& options = {});

}  // namespace dlbridge
