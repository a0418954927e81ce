// The process-wide Metal resolver registration. On Apple builds with Metal the default is
// src/devices/metal_apple.mm's resolver; elsewhere none is registered by default.
#include "dlbridge/metal_resolver.h"

#include <atomic>

namespace dlbridge {
namespace detail {
#if defined(DLBRIDGE_WITH_METAL)
const MetalResolver* PlatformMetalResolver() noexcept;  // src/devices/metal_apple.mm
#else
const MetalResolver* PlatformMetalResolver() noexcept { return nullptr; }
#endif
}  // namespace detail

namespace {
// Function-local, so a registration from another translation unit's static initialiser
// never sees it uninitialised.
std::atomic<const MetalResolver*>& Slot() noexcept {
  static std::atomic<const MetalResolver*> slot{detail::PlatformMetalResolver()};
  return slot;
}
}  // namespace

MetalResolver::~MetalResolver() = default;

void SetMetalResolver(const MetalResolver* resolver) noexcept {
  Slot().store(resolver, std::memory_order_release);
}

const MetalResolver* GetMetalResolver() noexcept { return Slot().load(std::memory_order_acquire); }

}  // namespace dlbridge
