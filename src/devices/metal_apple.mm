// Apple only: resolves id<MTLBuffer> handles (DLPack kDLMetal `data`) by storage mode.
// Built when DLBRIDGE_WITH_METAL (default ON on Apple); registered as the default resolver.
#import <Metal/Metal.h>

#include "dlbridge/metal_resolver.h"

namespace dlbridge {
namespace {

class AppleMetalResolver final : public MetalResolver {
 public:
  bool Resolve(void* buffer, MetalBufferInfo& info) const override {
    if (buffer == nullptr) return false;
    id object = (__bridge id)buffer;
    if (![object conformsToProtocol:@protocol(MTLBuffer)]) return false;
    id<MTLBuffer> mtl = (id<MTLBuffer>)object;
    info.length = static_cast<uint64_t>(mtl.length);
    info.contents = nullptr;
    switch (mtl.storageMode) {
      case MTLStorageModeShared:  // unified memory: contents is a host pointer
        info.storage = MetalStorageMode::kShared;
        info.contents = mtl.contents;
        return true;
      case MTLStorageModePrivate: info.storage = MetalStorageMode::kPrivate; return true;
      case MTLStorageModeMemoryless: info.storage = MetalStorageMode::kMemoryless; return true;
#if TARGET_OS_OSX
      case MTLStorageModeManaged:  // has contents, but needs didModifyRange: syncs: rejected
        info.storage = MetalStorageMode::kManaged;
        info.contents = mtl.contents;
        return true;
#endif
      default: return false;
    }
  }
};

}  // namespace

namespace detail {
const MetalResolver* PlatformMetalResolver() noexcept {
  static const AppleMetalResolver resolver;
  return &resolver;
}
}  // namespace detail

}  // namespace dlbridge
