/// @file
/// Tensor: a described buffer plus how its elements are laid out in it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/dtype.h"
#include "dlbridge/export.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/tensor_layout.h"

namespace dlbridge {
struct Tensor;
namespace detail {
/// Element zero's address (descriptor pointer + layout byte offset) once the checks of
/// Tensor::Data pass: the dtype is `requested` and the memory is host-readable.
DLBRIDGE_API void* CheckedElementZero(const Tensor& tensor, DLDataType requested);
/// The host rule of Tensor::Data alone (see HLP-4), for the bridge kit's views: an empty string
/// when the CPU may read the tensor's memory, otherwise why not and what to do (no caller prefix).
/// Throws only std::bad_alloc.
DLBRIDGE_API std::string HostReadProblem(const Tensor& tensor);
}  // namespace detail

/// What ToDLPack* consumes and FromDLPack produces.
struct Tensor {
  MemoryDescriptor descriptor;  ///< The buffer and its hold.
  TensorLayout layout;          ///< Relative to descriptor.GetPointer().
  DLDevice device{};            ///< device_type 0: derive from the descriptor's memory space.
  uint64_t flags = 0;           ///< DLPACK_FLAG_BITMASK_* bits.
  /// The stream (DLPack Python stream value: CUDA 1 = legacy default, 2 = per-thread default,
  /// other = a CUstream handle; ROCm 0 = null stream, other = a hipStream_t) on which work that
  /// writes this tensor may still be pending; empty: nothing pending. FromDLPack leaves it
  /// empty and the export functions ignore it (DLPack's structs carry no stream): a consumer is
  /// ordered after it with OrderStreams (dlbridge/runtime.h), which Python's __dlpack__ does.
  std::optional<int64_t> stream;

  /// A typed pointer to element zero (the descriptor's pointer plus the layout's byte
  /// offset), for memory the CPU may read. The pointer borrows: it is valid while this
  /// tensor's descriptor holds the memory. Index it with Layout().Strides(), in elements.
  /// `T` may be const (Data<const float>() on read-only memory: constness is not checked).
  ///
  /// Throws Error(kInvalidDtype) naming both dtypes when DataTypeOf<T>() is not the layout's
  /// dtype, and Error(kUnsupportedDevice) naming the memory space and device type when the
  /// memory is not host-readable (the device table's host_addressable: space "host" with
  /// kDLCPU, kDLCUDAHost or kDLROCMHost; GPU and managed memory are not).
  template <class T>
  T* Data() const {
    static_assert(!std::is_void_v<T>, "Tensor::Data<T>: T is an element type, not void");
    return static_cast<T*>(detail::CheckedElementZero(*this, DataTypeOf<std::remove_cv_t<T>>()));
  }
};

}  // namespace dlbridge
