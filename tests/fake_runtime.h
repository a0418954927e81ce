// The fake GPU runtimes (tests/fakes) as the C++ tests use them: one fake library opened at
// the path dlbridge is told to load (so both share its state) and made the runtime's library
// for the test's duration, its test API looked up once. The stream and copy tests share it.
#pragma once

#include <cstddef>
#include <string>

#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
#include <doctest/doctest.h>

#include "dlbridge/device_verification.h"
#include "dlbridge/testing.h"
#include "fake_driver.h"
#include "platform.h"
#endif

namespace dlbtest {

// How often `what` occurs in `text` (a fake's log).
inline size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
constexpr bool kHaveFakes = true;

struct Fake {
  dlbridge::GpuRuntime runtime;
  void* handle = nullptr;
  fake_driver_reset_fn reset = nullptr;
  fake_driver_log_fn log = nullptr;
  fake_driver_fail_fn fail = nullptr;
  fake_driver_live_events_fn live_events = nullptr;
  fake_driver_live_allocations_fn live_allocations = nullptr;
  fake_driver_device_base_fn device_base = nullptr;

  Fake(dlbridge::GpuRuntime which, const char* path) : runtime(which) {
    handle = DlbTestOpenLibrary(path);
    REQUIRE_MESSAGE(handle != nullptr, path);
    reset = Get<fake_driver_reset_fn>("fake_driver_reset");
    log = Get<fake_driver_log_fn>("fake_driver_log");
    fail = Get<fake_driver_fail_fn>("fake_driver_fail");
    live_events = Get<fake_driver_live_events_fn>("fake_driver_live_events");
    live_allocations = Get<fake_driver_live_allocations_fn>("fake_driver_live_allocations");
    device_base = Get<fake_driver_device_base_fn>("fake_driver_device_base");
    dlbridge::testing::DrainEventPools();  // STR-10: no event of an earlier test is reused
    reset();
    dlbridge::testing::SetRuntimeLibrary(runtime, path);  // loaded again on first use
  }
  ~Fake() {
    dlbridge::testing::DrainEventPools();  // STR-10: pooled events go back to this fake
    dlbridge::testing::SetRuntimeLibrary(runtime, nullptr);
    reset();
  }
  Fake(const Fake&) = delete;
  Fake& operator=(const Fake&) = delete;
  template <class Fn>
  Fn Get(const char* name) {
    void* p = DlbTestSymbol(handle, name);
    REQUIRE_MESSAGE(p != nullptr, name);
    return reinterpret_cast<Fn>(p);
  }
  std::string Log() const { return log(); }
  // The log's lines after `mark` (a Log().size()): the fake's reset would also forget its
  // allocations, so copy tests mark instead of resetting.
  std::string Since(size_t mark) const { return Log().substr(mark); }
  // Drops what the log holds so far (a load's lines, a setup order); no event may be live.
  void ClearLog() {
    dlbridge::testing::DrainEventPools();  // STR-10: pooled events go back to this fake
    const int live = live_events();
    REQUIRE(live == 0);
    reset();
  }
};

struct CudaFake : Fake {
  fake_driver_context_depth_fn depth = nullptr;
  fake_driver_retained_contexts_fn retained = nullptr;
  CudaFake() : Fake(dlbridge::GpuRuntime::kCuda, DLBRIDGE_TEST_FAKE_CUDA) {
    depth = Get<fake_driver_context_depth_fn>("fake_driver_context_depth");
    retained = Get<fake_driver_retained_contexts_fn>("fake_driver_retained_contexts");
  }
};

struct HipFake : Fake {
  fake_driver_current_device_fn current_device = nullptr;
  HipFake() : Fake(dlbridge::GpuRuntime::kHip, DLBRIDGE_TEST_FAKE_HIP) {
    current_device = Get<fake_driver_current_device_fn>("fake_driver_current_device");
  }
};
#else
constexpr bool kHaveFakes = false;
#endif

}  // namespace dlbtest
