/// @file
/// The libtorch bridge: at::Tensor to dlbridge::Tensor and back, zero copy (spec/bridges.md,
/// "libtorch"). Link dlbridge::torch.
///
/// Which headers may meet: this header names at::Tensor by a forward declaration only, so it
/// can be included before or after <torch/torch.h>, <ATen/ATen.h> and dlbridge's headers in one
/// translation unit. None of those includes ATen/dlpack.h, libtorch's DLPack 0.6 header: only
/// <ATen/DLConvertor.h> does, and it shares the include guard of DLPack 1.x's dlpack/dlpack.h,
/// so it must never be included where dlbridge's headers are. libtorch's DLPack functions
/// (at::toDLPack, at::fromDLPack) are reached through this bridge instead; its library is the
/// only place that includes <ATen/DLConvertor.h>.
#pragma once

#include "dlbridge/tensor.h"

// TOR-7: at::Tensor forward-declared, so that this header drags in no libtorch header at all.
namespace at {
class Tensor;
}  // namespace at

namespace dlbridge {
/// at::Tensor <-> dlbridge::Tensor without copying (libtorch 1.13 and later).
namespace torch {

/// Describes `tensor`'s memory as a dlbridge::Tensor, zero copy, holding a copy of `tensor`
/// (one more reference to its storage) as the descriptor's owner.
///
/// The result: the descriptor spans the whole storage (its data pointer and nbytes), "host"
/// for a CPU tensor; the layout has the tensor's dtype, sizes and strides, and its byte offset
/// is storage_offset() times the element size, so element zero (Tensor::Data<T>()) is
/// tensor.data_ptr(). Every dtype both name: bool, uint8, int8/16/32/64, float16/32/64,
/// bfloat16, complex64 and complex128 (not complex32, which dlbridge's dtype rule refuses).
///
/// Ownership, on success: the storage lives at least until the returned Tensor's hold drops
/// (on whatever thread drops it); `tensor` itself is unchanged. On failure: throws
/// dlbridge::Error and holds nothing: an undefined tensor or one that is not strided (sparse,
/// mkldnn) is kInvalidArgument; a tensor with the conjugate or negative bit set (its memory
/// does not hold its values: call resolve_conj()/resolve_neg() first) is kInvalidArgument; a
/// quantized dtype is kUnsupportedDtype; a tensor on any device but the CPU is
/// kUnsupportedDevice. An error libtorch raises (c10::Error) becomes dlbridge::Error
/// (kInvalidArgument) with libtorch's message.
dlbridge::Tensor FromAten(const at::Tensor& tensor);

/// Hands `tensor` to libtorch, zero copy: exports it with dlbridge::ToDLPack (legacy: libtorch
/// 1.13 takes no versioned tensor) and imports that with at::fromDLPack. The at::Tensor's
/// data_ptr() is element zero, its sizes and strides are the layout's (for a zero-size tensor,
/// whose export has no data pointer, data_ptr() is a placeholder that must not be read: libtorch
/// 1.13 would never free a storage whose data is null).
///
/// Ownership, on success: the hold moves into the result's storage and `tensor` holds nothing;
/// the hold drops (its release runs, or its owner reference drops) exactly once, when the
/// last at::Tensor sharing that storage dies, on whatever thread that is.
///
/// Refused, with dlbridge::Error, before anything is handed over (`tensor` then keeps its
/// hold): what libtorch 1.13 cannot take, namely negative strides (kInvalidStrides; libtorch
/// would end the process), more than one lane, unsigned integers wider than 8 bits, sub-byte
/// and float8 dtypes, opaque handles (kUnsupportedDtype), memory that is not host memory
/// (kUnsupportedDevice) and read-only tensors (kReadOnly: libtorch has no read-only tensors);
/// and everything dlbridge::ToDLPack refuses, with its error. Should libtorch fail after the
/// hand-off (c10::Error, out of memory), the hold has dropped exactly once and the failure is
/// thrown as dlbridge::Error (kInvalidArgument, or kOutOfMemory), with libtorch's message.
at::Tensor ToAten(dlbridge::Tensor&& tensor);

/// FromAten under the bridges' one naming scheme (spec/bridges.md, "Naming"; see KIT-6).
dlbridge::Tensor ToTensor(const at::Tensor& tensor);
/// ToAten under the bridges' one naming scheme: the hold moves into libtorch (see KIT-6).
at::Tensor Adopt(dlbridge::Tensor&& tensor);

}  // namespace torch
}  // namespace dlbridge
