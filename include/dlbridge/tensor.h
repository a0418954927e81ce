/// @file
/// Tensor: a described buffer plus how its elements are laid out in it.
#pragma once

#include <cstdint>
#include <optional>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/tensor_layout.h"

namespace dlbridge {

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
};

}  // namespace dlbridge
