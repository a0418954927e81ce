/// @file
/// Tensor: a described buffer plus how its elements are laid out in it.
#pragma once

#include "dlbridge/dlpack_header.h"

#include <cstdint>

#include "dlbridge/memory_descriptor.h"
#include "dlbridge/tensor_layout.h"

namespace dlbridge {

/// What ToDLPack* consumes and FromDLPack produces.
struct Tensor {
  MemoryDescriptor descriptor;  ///< The buffer and its hold.
  TensorLayout layout;          ///< Relative to descriptor.GetPointer().
  DLDevice device{};            ///< device_type 0: derive from the descriptor's memory space.
  uint64_t flags = 0;           ///< DLPACK_FLAG_BITMASK_* bits.
};

}  // namespace dlbridge
