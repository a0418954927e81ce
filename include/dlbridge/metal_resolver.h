/// @file
/// Metal buffers: DLPack's kDLMetal puts an id<MTLBuffer> handle in `data`, not an address.
/// A resolver turns the handle into host memory where the storage mode allows it.
#pragma once

#include <cstdint>

#include "dlbridge/export.h"

namespace dlbridge {

/// A Metal buffer's storage mode (MTLStorageMode), as a MetalResolver reports it.
enum class MetalStorageMode : int {
  kShared = 0,      ///< Unified memory: `contents` is a host pointer. Imports as "host".
  kManaged = 1,     ///< macOS managed: needs didModifyRange: syncs. Rejected.
  kPrivate = 2,     ///< GPU-only: no host-readable pointer. Rejected.
  kMemoryless = 3,  ///< Tile memory: no pointer at all. Rejected.
};

/// What a resolver reports about one MTLBuffer.
struct MetalBufferInfo {
  /// The buffer's storage mode; only kShared imports (as "host").
  MetalStorageMode storage = MetalStorageMode::kPrivate;
  void* contents = nullptr;  ///< [buffer contents] for shared storage, else null.
  uint64_t length = 0;       ///< [buffer length] in bytes.
};

/// Implemented by the caller (Objective-C++ on Apple, a model in tests).
class DLBRIDGE_API MetalResolver {
 public:
  /// Virtual: a resolver may be destroyed through this base.
  virtual ~MetalResolver();
  /// Fills `info` for `buffer` (an id<MTLBuffer> as a pointer); false if it is not a buffer.
  virtual bool Resolve(void* buffer, MetalBufferInfo& info) const = 0;
};

/// Registers a process-wide resolver used when ImportOptions names none; nullptr clears.
/// The resolver must outlive its registration. None is registered by default, except on
/// Apple builds with DLBRIDGE_WITH_METAL (the default there): src/devices/metal_apple.mm's
/// resolver.
DLBRIDGE_API void SetMetalResolver(const MetalResolver* resolver) noexcept;
/// The process-wide resolver (the last registered, or the default), or nullptr when none.
DLBRIDGE_API const MetalResolver* GetMetalResolver() noexcept;

}  // namespace dlbridge
