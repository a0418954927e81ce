// The one door to libtorch's DLPack functions (aten_dlpack.cpp, the only file that includes
// ATen/DLConvertor.h and so ATen's DLPack 0.6 header). Nothing here names a DLPack type:
// managed tensors cross as void*, since the legacy DLManagedTensor layout is the same in 0.6
// and 1.x (DLTensor, manager_ctx, deleter).
#pragma once

namespace at {
class Tensor;
}  // namespace at

namespace dlbridge {
namespace torch {
namespace detail {

/// Turns a legacy DLManagedTensor* into an at::Tensor; at::fromDLPack unless a test swaps in
/// another. It takes the tensor's deleter over, as at::fromDLPack does, or throws.
using AtenImporter = at::Tensor (*)(void* managed);

/// Hands dlbridge's legacy export `managed` to libtorch (`importer`, at::fromDLPack when
/// null), as bool when `asBool` (libtorch 1.13 reads no kDLBool: it gets uint8 and the result
/// is viewed as bool). Always consumes `managed`: on success its deleter runs once when the
/// last at::Tensor sharing the storage dies; on failure it has run exactly once before
/// dlbridge::Error is thrown (kOutOfMemory for std::bad_alloc, kInvalidArgument otherwise,
/// with libtorch's message), whether or not libtorch had taken it over.
at::Tensor ImportLegacy(void* managed, bool asBool, AtenImporter importer = nullptr);

}  // namespace detail
}  // namespace torch
}  // namespace dlbridge
