/// @file
/// The kinds of memory a descriptor can name, and their names (src/core/memory_space.cpp). The
/// DLPack device types of each are in dlbridge/device_map.h (src/devices/device_map.cpp).
#pragma once

#include "dlbridge/export.h"

namespace dlbridge {

/// What kind of memory a buffer is: not which device or context it belongs to.
/// There is deliberately no Metal space: shared-storage Metal memory is kHost, and
/// private-storage Metal memory has no host-readable pointer and cannot be described.
enum class MemorySpace : int {
  kHost = 0,       ///< "host": CPU / system memory (pinned host memory included).
  kCuda = 1,       ///< "cuda": NVIDIA device (or managed) memory.
  kHip = 2,        ///< "hip": AMD device memory.
  kLevelZero = 3,  ///< "level_zero": Intel Level Zero memory, meaningful only with its context.
};

/// The space's name: "host", "cuda", "hip" or "level_zero".
DLBRIDGE_API const char* MemorySpaceName(MemorySpace space) noexcept;

/// Parses a space name. Throws Error(kInvalidMemorySpace) listing the accepted names;
/// "metal" gets its own message explaining how Metal memory is described.
DLBRIDGE_API MemorySpace ParseMemorySpace(const char* name);

}  // namespace dlbridge
