// The test hooks (testing/include/dlbridge/testing.h, namespace dlbridge::testing): never in
// libdlbridge; linked with the library's own objects into dlbridge_testing, the library the unit
// tests link, so they are one file that only sets and reads state the library keeps anyway
// (see PKG-7).
#include <atomic>

#include "checker_internal.h"
#include "dlbridge/testing.h"
#include "dlpack_fast_paths.h"
#include "runtime_backend_internal.h"
#include "runtime_internal.h"

namespace dlbridge {
namespace testing {

uint64_t PointerQueryCount() noexcept { return detail::g_queries.load(std::memory_order_relaxed); }

void SetRuntimeLibrary(GpuRuntime runtime, const char* library) {
  const int i = static_cast<int>(runtime);
  if (i < 0 || i >= detail::kGpuRuntimeCount) return;
  detail::BackendOf(runtime).Reset(library);
}

void DrainEventPools() {
  detail::BackendOf(GpuRuntime::kCuda).DrainEventPool();
  detail::BackendOf(GpuRuntime::kHip).DrainEventPool();
}

PointerKind HipPointerKind(int runtime_major, int memory_type, bool is_managed) {
  return detail::HipPointerKind(runtime_major, memory_type, is_managed);
}

FakeRuntime::~FakeRuntime() = default;

int32_t FakeRuntime::LevelZeroDeviceIndex(void*) const { return -1; }

void SetFakeRuntime(GpuRuntime runtime, const FakeRuntime* fake) noexcept {
  detail::g_fakes[detail::RuntimeIndex(runtime)].store(fake, std::memory_order_release);
}

void SetFastPaths(bool on) noexcept { detail::g_fast_paths.store(on); }

std::vector<Finding> CheckWithDeviceRow(const DLManagedTensorVersioned& managed,
                                        const DeviceTypeInfo& row) {
  return detail::CheckTensorWithRow(managed, row);
}

}  // namespace testing
}  // namespace dlbridge
