// What src/copies/host_copy.cpp lends the device copies (src/copies/device_copy.cpp): the aligned
// host block every dlbridge allocation uses, and the one strided host copier.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dlbridge/dlpack_header.h"

namespace dlbridge {
namespace detail {

/// dlbridge's own buffers start on this boundary (the DLPack header asks it of `data`).
constexpr size_t kAllocationAlignment = 256;

/// A kAllocationAlignment-aligned block of `bytes` (0 gives a block too) from std::malloc, or
/// null when there is not enough memory. Free it with FreeAligned, once.
void* AllocateAligned(size_t bytes) noexcept;
/// Frees an AllocateAligned block (null: nothing); a ReleaseFunction.
void FreeAligned(void* block) noexcept;

/// The bytes a C-contiguous, packed tensor of `dtype` and `shape` takes (AllocateHostTensor's
/// size). Throws Error as AllocateHostTensor does for the dtype, the shape and kOverflow, its
/// messages starting with `where`.
int64_t PackedSizeOrThrow(const char* where, DLDataType dtype, int32_t ndim, const int64_t* shape);

/// Copies the elements of `from` (host-readable; element zero at data + byte_offset, sub-byte
/// padded when `flags` says so; `contiguous`: its layout's IsContiguous) in C order, packed,
/// into the `bytes` bytes at `out`.
void CopyHostElements(const DLTensor& from, uint64_t flags, bool contiguous, unsigned char* out,
                      int64_t bytes) noexcept;

}  // namespace detail
}  // namespace dlbridge
