/// @file
/// Export: a Tensor becomes a DLPack managed tensor that owns its hold.
#pragma once

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"

namespace dlbridge {

/// Exports `tensor` as a DLPack 1.x tensor (version {1, DLPACK_MINOR_VERSION} of the header
/// dlbridge was built with). Zero-copy: `data` is element zero's address (the descriptor's
/// pointer plus the layout's byte offset) and `byte_offset` 0; ExportOptions::keep_byte_offset
/// keeps the pointer and offset as given. A tensor without elements exports `data` NULL and
/// `byte_offset` 0 (but for a re-export, below, which hands back the original as it was). A
/// descriptor that holds nothing is refused with Error(kNoHold) unless
/// ExportOptions::allow_unowned is set.
///
/// Ownership, on success: the descriptor's hold moves into the result and `tensor` holds
/// nothing (with allow_unowned and no hold, the deleter frees only the tensor). The consumer
/// calls `deleter` exactly once; it drops the hold (calls the release, or drops the owner
/// reference) and frees the tensor, on any thread. With a release hold,
/// `manager_ctx` is the release's context. One heap allocation per export.
/// Re-export: a tensor that FromDLPack produced from a DLManagedTensorVersioned, exported
/// unchanged (same element-zero address, size, layout, device and flags, and the original
/// carries strides), hands back that original tensor, with no allocation and without
/// re-running the export checks or a device query (import ran them); verify_device =
/// kRequired, Level Zero and a contradicting device_id take the full path. Any other import
/// is exported as a new tensor whose deleter runs the original's.
///
/// On failure: throws Error and `tensor` keeps its hold; nothing is released or leaked. The
/// codes: kNoHold, kInvalidMemorySpace, kInvalidFlags, kInvalidDtype, kUnsupportedDtype,
/// kInvalidStrides, kOverflow, kOutOfBounds, kDeviceMismatch, kMissingDeviceId,
/// kMissingContext, kUnknownPointer, the runtime's error under kRequired, and kOutOfMemory
/// when the block cannot be allocated (spec/validation.md lists each rule).
DLBRIDGE_API DLManagedTensorVersioned* ToDLPackVersioned(Tensor&& tensor,
                                                         const ExportOptions& options);

/// ToDLPackVersioned(tensor, ExportOptions{}), without building the options at each call.
DLBRIDGE_API DLManagedTensorVersioned* ToDLPackVersioned(Tensor&& tensor);

/// Legacy (pre-1.0) export; prefer ToDLPackVersioned. The legacy struct cannot say
/// read-only or padded sub-byte, so such tensors are refused: read-only (tensor.flags or
/// ExportOptions::read_only) with Error(kReadOnly), padded sub-byte with Error(kInvalidFlags).
/// Ownership as for ToDLPackVersioned, re-export included (for legacy originals).
DLBRIDGE_API DLManagedTensor* ToDLPack(Tensor&& tensor, const ExportOptions& options);

/// ToDLPack(tensor, ExportOptions{}), without building the options at each call.
DLBRIDGE_API DLManagedTensor* ToDLPack(Tensor&& tensor);

}  // namespace dlbridge
