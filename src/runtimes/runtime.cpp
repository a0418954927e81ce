// The GPU runtime API (include/dlbridge/runtime.h) and the one place that asks a runtime
// anything (src/runtimes/runtime_internal.h): each question goes to the runtime's backend
// (src/runtimes/runtime_backend_internal.h), or to the fake a test registered for it (the test
// hooks that register one are in src/testing/testing_hooks.cpp). spec/device-map.md GPU-*.
#include "dlbridge/runtime.h"

#include <atomic>
#include <string>

#include "core/error_internal.h"
#include "devices/device_map_internal.h"
#include "runtimes/runtime_backend_internal.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {

using detail::Fail;

namespace detail {

std::atomic<uint64_t> g_queries{0};
std::atomic<const RuntimeFake*> g_fakes[kGpuRuntimeCount] = {};
RuntimeFake::~RuntimeFake() = default;

}  // namespace detail

using detail::g_fakes;
using detail::g_queries;

namespace {

std::atomic<void*> g_ze_context{nullptr};
std::atomic<void*> g_ze_device{nullptr};

// One runtime as the checks see it: the real backend, or a test's fake.
struct Runtime {
  GpuRuntime which;
  const detail::RuntimeFake* fake;

  const RuntimeInfo& Info() const {
    static const RuntimeInfo kFakeInfo{RuntimeStatus::kReady, "fake runtime (tests)", 0, ""};
    return fake != nullptr ? kFakeInfo : detail::BackendOf(which).Info();
  }
  RuntimeStatus Query(const void* pointer, void* context, PointerInfo* info,
                      std::string* error) const {
    g_queries.fetch_add(1, std::memory_order_relaxed);
    if (fake != nullptr) {
      *info = fake->Query(pointer, context);
      return RuntimeStatus::kReady;
    }
    return detail::BackendOf(which).Query(pointer, context, info, error);
  }
  int32_t DeviceIndex(void* device, std::string* error) const {
    if (fake != nullptr) return fake->LevelZeroDeviceIndex(device);
    return detail::BackendOf(which).DeviceIndex(device, error);
  }
};

Runtime For(GpuRuntime which) {
  return Runtime{which, g_fakes[detail::RuntimeIndex(which)].load(std::memory_order_acquire)};
}

}  // namespace

namespace detail {

ErrorCode CodeFor(RuntimeStatus status) noexcept {
  switch (status) {
    case RuntimeStatus::kStubLibrary: return ErrorCode::kStubLibrary;
    case RuntimeStatus::kNoDevice: return ErrorCode::kNoDevice;
    case RuntimeStatus::kNotInitialized: return ErrorCode::kRuntimeNotInitialized;
    default: return ErrorCode::kRuntimeUnavailable;
  }
}

const RuntimeInfo* UnusableRuntime(GpuRuntime runtime) {
  const RuntimeInfo& info = BackendOf(runtime).Info();
  return info.status == RuntimeStatus::kReady ? nullptr : &info;
}

Backend& ReadyBackend(GpuRuntime runtime, const std::string& where) {
  if (const RuntimeInfo* info = UnusableRuntime(runtime)) {
    Fail(CodeFor(info->status), where + info->message);
  }
  return BackendOf(runtime);
}

RuntimeAnswer AskRuntime(const char* where, GpuRuntime runtime, const void* pointer,
                         void* level_zero_context) {
  const Runtime rt = For(runtime);
  RuntimeAnswer answer;
  if (rt.fake == nullptr) answer.unavailable = UnusableRuntime(runtime);
  if (answer.unavailable != nullptr) return answer;
  std::string error;
  const RuntimeStatus status = rt.Query(pointer, level_zero_context, &answer.pointer, &error);
  if (status != RuntimeStatus::kReady) Fail(CodeFor(status), std::string(where) + ": " + error);
  return answer;
}

int32_t LevelZeroDeviceIndex(void* device, std::string* error) {
  return For(GpuRuntime::kLevelZero).DeviceIndex(device, error);
}

void LevelZeroHandles(void* option_context, void* option_device, void** context, void** device) {
  *context =
      option_context != nullptr ? option_context : g_ze_context.load(std::memory_order_acquire);
  *device = option_device != nullptr ? option_device : g_ze_device.load(std::memory_order_acquire);
}

}  // namespace detail

const char* GpuRuntimeName(GpuRuntime runtime) noexcept {
  switch (runtime) {
    case GpuRuntime::kCuda: return "CUDA";
    case GpuRuntime::kHip: return "HIP";
    case GpuRuntime::kLevelZero: return "Level Zero";
  }
  return "unknown";
}

RuntimeInfo GetRuntimeInfo(GpuRuntime runtime) { return For(runtime).Info(); }

PointerInfo QueryPointer(MemorySpace space, const void* pointer, void* level_zero_context) {
  GpuRuntime runtime = GpuRuntime::kCuda;
  if (!detail::SpaceRuntime(space, &runtime)) {
    Fail(ErrorCode::kInvalidMemorySpace,
         std::string("QueryPointer: memory space \"") + MemorySpaceName(space) +
             "\" has no runtime to ask; accepted: " + detail::GpuSpaceNames());
  }
  void* context = nullptr;
  void* device = nullptr;
  detail::LevelZeroHandles(level_zero_context, nullptr, &context, &device);
  if (runtime == GpuRuntime::kLevelZero && context == nullptr) {
    Fail(ErrorCode::kMissingContext,
         "QueryPointer: Level Zero needs a context (the argument or SetLevelZeroContext)");
  }
  const detail::RuntimeAnswer answer =
      detail::AskRuntime("QueryPointer", runtime, pointer, context);
  if (answer.unavailable != nullptr) {
    Fail(detail::CodeFor(answer.unavailable->status),
         "QueryPointer: " + answer.unavailable->message);
  }
  return answer.pointer;
}

void SetLevelZeroContext(void* context, void* device) noexcept {
  g_ze_context.store(context, std::memory_order_release);
  g_ze_device.store(device, std::memory_order_release);
}

void GetLevelZeroContext(void** context, void** device) noexcept {
  if (context != nullptr) *context = g_ze_context.load(std::memory_order_acquire);
  if (device != nullptr) *device = g_ze_device.load(std::memory_order_acquire);
}

}  // namespace dlbridge
