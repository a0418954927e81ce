/// @file
/// Import: any DLPack managed tensor becomes a Tensor whose release is the tensor's deleter.
#pragma once

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/metal_resolver.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"

namespace dlbridge {

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
DLBRIDGE_API Tensor FromDLPack(DLManagedTensorVersioned* managed, const ImportOptions& options);

/// FromDLPack(managed, ImportOptions{}), without building the options at each call.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensorVersioned* managed);

/// Imports a legacy tensor, with the same ownership rules and errors (no version to check).
/// NULL strides mean C-contiguous; ImportOptions::legacy_read_only marks it read-only.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensor* managed, const ImportOptions& options);

/// FromDLPack(managed, ImportOptions{}), without building the options at each call.
DLBRIDGE_API Tensor FromDLPack(DLManagedTensor* managed);

}  // namespace dlbridge
