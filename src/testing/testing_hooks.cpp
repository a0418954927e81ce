// The test hooks (testing/include/dlbridge/testing.h, namespace dlbridge::testing): never in
// libdlbridge; linked with the library's own objects into dlbridge_testing, the library the unit
// tests link, so they are one file that only sets and reads state the library keeps anyway
// (see PKG-7).
#include <atomic>

#include "dlbridge/testing.h"
#include "dlpack/checker_internal.h"
#include "dlpack/dlpack_fast_paths.h"
#include "dlpack/export_internal.h"
#include "runtimes/runtime_backend_internal.h"
#include "runtimes/runtime_internal.h"

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

namespace {

// A test's FakeRuntime as the library's own fake interface (detail::RuntimeFake), one per
// runtime, so that libdlbridge itself never names testing::FakeRuntime.
class Adapter final : public detail::RuntimeFake {
 public:
  std::atomic<const FakeRuntime*> fake{nullptr};
  PointerInfo Query(const void* pointer, void* level_zero_context) const override {
    return fake.load(std::memory_order_acquire)->Query(pointer, level_zero_context);
  }
  int32_t LevelZeroDeviceIndex(void* device) const override {
    return fake.load(std::memory_order_acquire)->LevelZeroDeviceIndex(device);
  }
};
Adapter g_adapters[detail::kGpuRuntimeCount];

}  // namespace

void SetFakeRuntime(GpuRuntime runtime, const FakeRuntime* fake) noexcept {
  const int i = detail::RuntimeIndex(runtime);
  if (fake == nullptr) {  // the library stops asking before the adapter forgets the fake
    detail::g_fakes[i].store(nullptr, std::memory_order_release);
    g_adapters[i].fake.store(nullptr, std::memory_order_release);
    return;
  }
  g_adapters[i].fake.store(fake, std::memory_order_release);
  detail::g_fakes[i].store(&g_adapters[i], std::memory_order_release);
}

void SetFastPaths(bool on) noexcept { detail::g_fast_paths.store(on); }

bool SpareExportBlock() noexcept { return detail::kSpareBlock; }

std::vector<Finding> CheckWithDeviceRow(const DLManagedTensorVersioned& managed,
                                        const DeviceTypeInfo& row) {
  return detail::CheckTensorWithRow(managed, row);
}

}  // namespace testing
}  // namespace dlbridge
