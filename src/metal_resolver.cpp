// The process-wide Metal resolver registration.
#include "dlbridge/metal_resolver.h"

#include <atomic>

namespace dlbridge {
namespace {
std::atomic<const MetalResolver*> g_resolver{nullptr};
}  // namespace

MetalResolver::~MetalResolver() = default;

void SetMetalResolver(const MetalResolver* resolver) noexcept {
  g_resolver.store(resolver, std::memory_order_release);
}

const MetalResolver* GetMetalResolver() noexcept {
  return g_resolver.load(std::memory_order_acquire);
}

}  // namespace dlbridge
