// Stream ordering (spec/streams.md STR-*) against the fake CUDA driver and HIP runtime
// (tests/fakes), which dlbridge loads by path through its real backends: the event, wait,
// context and device calls below are the backends' own, logged by the fakes.
#include <doctest/doctest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/testing.h"
#include "fake_runtime.h"
#include "platform.h"
#if !defined(_WIN32)
#include <sys/wait.h>
#include <unistd.h>
#endif

using dlbridge::ErrorCode;
using dlbridge::GpuRuntime;
using dlbridge::OrderStreams;
using namespace dlbtest;

namespace {

constexpr bool kCudaBuilt = DLBRIDGE_TEST_WITH_CUDA != 0;
constexpr bool kHipBuilt = DLBRIDGE_TEST_WITH_HIP != 0;

}  // namespace

TEST_CASE("STR-1 stream values are checked per device") {
  struct Row {
    DLDevice device;
    int64_t stream;
    bool accepted;
  };
  const Row rows[] = {
      // CUDA: 1 legacy default, 2 per-thread default, > 2 a handle, -1 nothing; 0, < -1 not.
      {{kDLCUDA, 0}, 1, true},
      {{kDLCUDA, 3}, 2, true},
      {{kDLCUDA, 0}, 3, true},
      {{kDLCUDA, 0}, INT64_MAX, true},
      {{kDLCUDA, 0}, -1, true},
      {{kDLCUDA, 0}, 0, false},
      {{kDLCUDA, 0}, -2, false},
      {{kDLCUDA, 0}, INT64_MIN, false},
      {{kDLCUDAHost, 0}, 0, false},
      {{kDLCUDAHost, 0}, 2, true},
      {{kDLCUDAManaged, 0}, 0, false},
      {{kDLCUDAManaged, 0}, 0x7f00, true},
      // ROCm: 0 null stream, > 2 a handle, -1 nothing; 1, 2, < -1 not.
      {{kDLROCM, 0}, 0, true},
      {{kDLROCM, 0}, 3, true},
      {{kDLROCM, 1}, -1, true},
      {{kDLROCM, 0}, 1, false},
      {{kDLROCM, 0}, 2, false},
      {{kDLROCM, 0}, -5, false},
      {{kDLROCMHost, 0}, 2, false},
      {{kDLROCMHost, 0}, 0, true},
      // kDLCPU has no streams: every value is refused.
      {{kDLCPU, 0}, -1, false},
      {{kDLCPU, 0}, 0, false},
      {{kDLCPU, 0}, 1, false},
      // No convention for the rest: anything goes.
      {{kDLOneAPI, 0}, 0, true},
      {{kDLOneAPI, 0}, -7, true},
      {{kDLMetal, 0}, 1, true},
  };
  for (const Row& r : rows) {
    CAPTURE(r.device.device_type);
    CAPTURE(r.stream);
    if (r.accepted) {
      CHECK_NOTHROW(dlbridge::CheckStreamValue(r.device, r.stream, "test: stream"));
      continue;
    }
    const std::string value = "test: stream " + std::to_string(r.stream) + " is illegal for ";
    CHECK_DLB_ERROR(dlbridge::CheckStreamValue(r.device, r.stream, "test: stream"),
                    ErrorCode::kInvalidArgument, value);
  }
  CHECK_DLB_ERROR(dlbridge::CheckStreamValue({kDLCUDA, 0}, 0, "s"), ErrorCode::kInvalidArgument,
                  "s 0 is illegal for kDLCUDA; accepted for CUDA: 1 (the legacy default stream; "
                  "Python: None), 2 (the per-thread default stream), > 2 (a CUstream");
  CHECK_DLB_ERROR(dlbridge::CheckStreamValue({kDLROCM, 0}, 2, "s"), ErrorCode::kInvalidArgument,
                  "s 2 is illegal for kDLROCM; accepted for ROCm: 0 (the null stream; Python: "
                  "None), > 2 (a hipStream_t), -1 (order nothing)");
  CHECK_DLB_ERROR(dlbridge::CheckStreamValue({kDLCPU, 0}, 1, "s"), ErrorCode::kInvalidArgument,
                  "s 1 is illegal for kDLCPU memory, which has no streams; pass no stream");
  // OrderStreams checks both of its values, naming each, before any runtime is loaded.
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, "/nonexistent/libcuda.so.1");
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 0, 1), ErrorCode::kInvalidArgument,
                  "OrderStreams: producer 0 is illegal for kDLCUDA");
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 3, -9), ErrorCode::kInvalidArgument,
                  "OrderStreams: consumer -9 is illegal for kDLCUDA");
  CHECK_DLB_ERROR(OrderStreams({kDLROCMHost, 0}, 1, 0), ErrorCode::kInvalidArgument,
                  "OrderStreams: producer 1 is illegal for kDLROCMHost");
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, nullptr);
}

TEST_CASE("STR-2 -1, equal streams and devices without streams order nothing and load nothing") {
  if (!kHaveFakes) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA)
  CudaFake cuda;
  HipFake hip;
  // A load would run cuInit / hipGetDeviceCount and log their injected failures.
  cuda.fail("cuInit", 999);
  hip.fail("hipGetDeviceCount", 999);
  CHECK_FALSE(OrderStreams({kDLCUDA, 0}, 0x1234, -1));
  CHECK_FALSE(OrderStreams({kDLCUDA, 0}, -1, 0x1234));
  CHECK_FALSE(OrderStreams({kDLCUDA, 1}, 0x1234, 0x1234));
  CHECK_FALSE(OrderStreams({kDLCUDAHost, 0}, 1, 1));
  CHECK_FALSE(OrderStreams({kDLROCM, 0}, 0, 0));
  CHECK_FALSE(OrderStreams({kDLROCM, 0}, 0x99, -1));
  CHECK_FALSE(OrderStreams({kDLCPU, 0}, 1, 2));  // no streams: not checked, not ordered
  CHECK_FALSE(OrderStreams({kDLOneAPI, 0}, 5, 6));
  CHECK(cuda.Log().empty());
  CHECK(hip.Log().empty());
  // The first ordering that is needed does load the runtime (and meets the failure); with
  // the backend switched off it says so, and still nothing is loaded.
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 0x1234, 1), ErrorCode::kRuntimeUnavailable,
                  kCudaBuilt ? "cuInit failed (CUDA_ERROR_UNKNOWN)" : "DLBRIDGE_WITH_CUDA=OFF");
  CHECK(cuda.Log() == (kCudaBuilt ? "cuInit -> error 999 (injected)\n" : ""));
#endif
}

TEST_CASE("STR-3 CUDA: an event recorded on the producer, waited on by the consumer") {
  if (!kHaveFakes) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA)
  CudaFake cuda;
  if (!kCudaBuilt) {
    CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 0x1234, 1), ErrorCode::kRuntimeUnavailable,
                    "DLBRIDGE_WITH_CUDA=OFF");
    return;
  }
  CHECK(dlbridge::GetRuntimeInfo(GpuRuntime::kCuda).status == dlbridge::RuntimeStatus::kReady);
  cuda.ClearLog();
  CHECK(OrderStreams({kDLCUDA, 1}, 0x1234, 1));  // a CUstream, then the legacy default stream
  CHECK(cuda.Log() ==
        "cuDeviceGet ordinal=1 -> dev1\n"
        "cuDevicePrimaryCtxRetain dev1 -> ctx1\n"
        "cuCtxPushCurrent ctx1\n"
        "cuEventCreate flags=2 -> ev1\n"  // CU_EVENT_DISABLE_TIMING
        "cuEventRecord ev1 stream=0x1234\n"
        "cuStreamWaitEvent stream=0x1 ev1\n"
        "cuCtxPopCurrent -> ctx1\n"
        "cuDevicePrimaryCtxRelease dev1\n");
  CHECK(cuda.live_events() == 1);  // pooled for the next exchange (STR-10)
  CHECK(cuda.depth() == 0);
  CHECK(cuda.retained() == 0);
  // Pinned and managed memory order on device 0's streams; 2 is the per-thread default.
  cuda.ClearLog();
  CHECK(OrderStreams({kDLCUDAHost, 0}, 2, 0xabc0));
  CHECK(OrderStreams({kDLCUDAManaged, 0}, 1, 2));
  const std::string log = cuda.Log();
  CHECK(Count(log, "cuDeviceGet ordinal=0 -> dev0\n") == 2);
  CHECK(log.find("cuEventRecord ev1 stream=0x2\ncuStreamWaitEvent stream=0xabc0 ev1\n") !=
        std::string::npos);
  CHECK(log.find("cuEventRecord ev1 stream=0x1\ncuStreamWaitEvent stream=0x2 ev1\n") !=
        std::string::npos);  // the pooled event again
  CHECK(cuda.live_events() == 1);
  // From several threads at once: each thread pushes and pops its own context.
  cuda.ClearLog();
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([i, &ok] {
      for (int k = 0; k < 25; ++k) ok[i] += OrderStreams({kDLCUDA, i % 2}, 0x100 + i, 1) ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) CHECK(ok[i] == 25);
  CHECK(Count(cuda.Log(), "cuStreamWaitEvent stream=0x1 ev") == 100);
  CHECK(cuda.live_events() <= 8);  // at most four pooled per device
  dlbridge::testing::DrainEventPools();
  CHECK(cuda.live_events() == 0);
  CHECK(cuda.retained() == 0);
#endif
}

TEST_CASE("STR-4 HIP: an event recorded on the producer, waited on by the consumer") {
  if (!kHaveFakes) return;
#if defined(DLBRIDGE_TEST_FAKE_HIP)
  HipFake hip;
  if (!kHipBuilt) {
    CHECK_DLB_ERROR(OrderStreams({kDLROCM, 0}, 0x1234, 0), ErrorCode::kRuntimeUnavailable,
                    "DLBRIDGE_WITH_HIP=OFF");
    return;
  }
  CHECK(dlbridge::GetRuntimeInfo(GpuRuntime::kHip).status == dlbridge::RuntimeStatus::kReady);
  hip.ClearLog();
  CHECK(OrderStreams({kDLROCM, 1}, 0x5678, 0));  // a hipStream_t, then the null stream
  CHECK(hip.Log() ==
        "hipGetDevice -> 0\n"
        "hipSetDevice 1\n"
        "hipEventCreateWithFlags flags=2 device=1 -> ev1\n"  // hipEventDisableTiming
        "hipEventRecord ev1 stream=0x5678\n"
        "hipStreamWaitEvent stream=0x0 ev1\n"
        "hipSetDevice 0\n");
  CHECK(hip.current_device() == 0);
  CHECK(hip.live_events() == 1);  // pooled for the next exchange (STR-10)
  // On the current device nothing is switched; pinned host memory orders on device 0.
  hip.ClearLog();
  CHECK(OrderStreams({kDLROCMHost, 0}, 0, 0x42));
  CHECK(hip.Log() ==
        "hipGetDevice -> 0\n"
        "hipEventCreateWithFlags flags=2 device=0 -> ev1\n"
        "hipEventRecord ev1 stream=0x0\n"
        "hipStreamWaitEvent stream=0x42 ev1\n");
#endif
}

TEST_CASE("STR-5 a failed driver call is named, and what was made is destroyed") {
  if (!kHaveFakes || !kCudaBuilt) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA)
  CudaFake cuda;
  REQUIRE(dlbridge::GetRuntimeInfo(GpuRuntime::kCuda).status == dlbridge::RuntimeStatus::kReady);
  struct Case {
    const char* call;
    int live_events;  // events the driver still holds (pooled ones included)
    int depth;
    int retained;
  };
  const Case cases[] = {
      {"cuDeviceGet", 0, 0, 0},
      {"cuDevicePrimaryCtxRetain", 0, 0, 0},
      {"cuCtxPushCurrent", 0, 0, 0},
      {"cuEventCreate", 0, 0, 0},
      {"cuEventRecord", 0, 0, 0},
      {"cuStreamWaitEvent", 0, 0, 0},
      // The wait was queued: its event went back to the pool (STR-10), not leaked.
      {"cuCtxPopCurrent", 1, 1, 0},
      {"cuDevicePrimaryCtxRelease", 1, 0, 1},
  };
  for (const Case& c : cases) {
    CAPTURE(c.call);
    cuda.ClearLog();
    cuda.fail(c.call, 400);
    CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 1}, 0x1234, 0x5678), ErrorCode::kRuntimeUnavailable,
                    std::string("OrderStreams: ") + c.call +
                        " failed: CUDA_ERROR_INVALID_HANDLE (ordering stream 0x5678 after stream "
                        "0x1234 of kDLCUDA device 1)");
    CHECK(cuda.live_events() == c.live_events);
    CHECK(cuda.depth() == c.depth);
    CHECK(cuda.retained() == c.retained);
    const std::string log = cuda.Log();
    // Every step taken before the failure is undone: a retain has its release, a push its pop.
    CHECK(Count(log, "cuDevicePrimaryCtxRetain dev") ==
          Count(log, "cuDevicePrimaryCtxRelease dev") + static_cast<size_t>(c.retained));
    CHECK(Count(log, "cuCtxPushCurrent ctx") ==
          Count(log, "cuCtxPopCurrent -> ctx") + static_cast<size_t>(c.depth));
    cuda.reset();  // forgets what a failed cleanup left behind
  }
  // A device the driver does not have.
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 7}, 0x1234, 1), ErrorCode::kRuntimeUnavailable,
                  "cuDeviceGet failed: CUDA_ERROR_INVALID_DEVICE (ordering stream 1 after "
                  "stream 0x1234 of kDLCUDA device 7)");
#endif
#if defined(DLBRIDGE_TEST_FAKE_HIP)
  if (!kHipBuilt) return;
  HipFake hip;
  REQUIRE(dlbridge::GetRuntimeInfo(GpuRuntime::kHip).status == dlbridge::RuntimeStatus::kReady);
  for (const char* call : {"hipGetDevice", "hipSetDevice", "hipEventCreateWithFlags",
                           "hipEventRecord", "hipStreamWaitEvent"}) {
    CAPTURE(call);
    hip.ClearLog();
    hip.fail(call, 400);
    CHECK_DLB_ERROR(OrderStreams({kDLROCM, 1}, 0x1234, 0), ErrorCode::kRuntimeUnavailable,
                    std::string("OrderStreams: ") + call +
                        " failed: hipErrorInvalidHandle (ordering stream 0 after stream 0x1234 of "
                        "kDLROCM device 1)");
    CHECK(hip.current_device() == 0);  // the caller's device is selected again
    CHECK(hip.live_events() == 0);
    hip.reset();
  }
  CHECK_DLB_ERROR(OrderStreams({kDLROCM, 5}, 0x1234, 0), ErrorCode::kRuntimeUnavailable,
                  "hipSetDevice failed: hipErrorInvalidDevice");
  CHECK(hip.current_device() == 0);
#endif
}

TEST_CASE("STR-6 a runtime that cannot be used is an error only where ordering is needed") {
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, "/nonexistent/libcuda.so.1");
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kHip, "/nonexistent/libamdhip64.so.6");
  CHECK_FALSE(OrderStreams({kDLCUDA, 0}, 0x1234, -1));
  CHECK_FALSE(OrderStreams({kDLROCM, 0}, 0x1234, 0x1234));
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 0x1234, 1), ErrorCode::kRuntimeUnavailable,
                  kCudaBuilt ? "OrderStreams: stream 1 of kDLCUDA device 0 cannot be ordered "
                               "after stream 0x1234: CUDA: the driver library "
                               "/nonexistent/libcuda.so.1 is not installed"
                             : "DLBRIDGE_WITH_CUDA=OFF");
  CHECK_DLB_ERROR(OrderStreams({kDLROCM, 0}, 0x1234, 0), ErrorCode::kRuntimeUnavailable,
                  kHipBuilt ? "HIP: the runtime library /nonexistent/libamdhip64.so.6 is not "
                              "installed"
                            : "DLBRIDGE_WITH_HIP=OFF");
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kCuda, nullptr);
  dlbridge::testing::SetRuntimeLibrary(GpuRuntime::kHip, nullptr);
#if defined(DLBRIDGE_TEST_FAKE_CUDA)
  if (!kCudaBuilt) return;
  // A driver without the event entry points still answers pointer queries.
  CudaFake cuda;
  cuda.fail("cuGetProcAddress:cuStreamWaitEvent", 500);
  REQUIRE(dlbridge::GetRuntimeInfo(GpuRuntime::kCuda).status == dlbridge::RuntimeStatus::kReady);
  const dlbridge::PointerInfo info =
      dlbridge::QueryPointer(dlbridge::MemorySpace::kCuda, cuda.device_base());
  CHECK(info.kind == dlbridge::PointerKind::kDevice);
  CHECK(info.device_ordinal == 0);
  CHECK_DLB_ERROR(OrderStreams({kDLCUDA, 0}, 0x1234, 1), ErrorCode::kRuntimeUnavailable,
                  "lacks a driver entry point for stream ordering");
  CHECK(cuda.live_events() == 0);
#endif
}

TEST_CASE("STR-8 Tensor::stream is not part of DLPack: import leaves it empty, export ignores it") {
  Buffer buf;
  ReleaseCounter c;
  dlbridge::Tensor t = HostTensor(buf, c, F32({4}));
  CHECK_FALSE(t.stream.has_value());  // a new Tensor: nothing pending
  t.stream = 0x1234;
  DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
  CHECK(m->dl_tensor.data == buf.bytes);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  dlbridge::Tensor back = dlbridge::FromDLPack(m);
  CHECK_FALSE(back.stream.has_value());
  back = dlbridge::Tensor();
  CHECK(c.calls == 1);
}

TEST_CASE("STR-10 OrderStreams reuses pooled events: none is created in steady state") {
  if (!kHaveFakes) return;
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && defined(DLBRIDGE_TEST_FAKE_HIP)
  if (kCudaBuilt) {
    CudaFake cuda;
    cuda.ClearLog();
    CHECK(OrderStreams({kDLCUDA, 0}, 0x1234, 1));  // warms the pool of device 0
    CHECK(OrderStreams({kDLCUDA, 1}, 0x1234, 1));  // and of device 1: a pool per device
    const size_t warm = cuda.Log().size();
    for (int i = 0; i < 50; ++i) CHECK(OrderStreams({kDLCUDA, i % 2}, 0x1000 + i, 1));
    const std::string log = cuda.Log().substr(warm);
    CHECK(Count(log, "cuEventCreate") == 0);  // 0 event creations per exchange
    CHECK(Count(log, "cuEventDestroy") == 0);
    CHECK(Count(log, "cuStreamWaitEvent stream=0x1 ev") == 50);
    CHECK(cuda.live_events() == 2);
    CHECK(cuda.depth() == 0);
    CHECK(cuda.retained() == 0);
    // A failure after the event was taken destroys it: the pool never keeps a suspect event.
    cuda.fail("cuStreamWaitEvent", 400);
    CHECK_THROWS_AS(OrderStreams({kDLCUDA, 0}, 0x1234, 1), dlbridge::Error);
    CHECK(cuda.live_events() == 1);  // device 1's
    // The fake's reset forgets its events: the pooled ones become handles the driver refuses,
    // as after a context reset. The refused one is replaced once, and the order succeeds.
    cuda.reset();
    CHECK(OrderStreams({kDLCUDA, 1}, 0x1234, 1));
    CHECK(cuda.Log() ==
          "cuDeviceGet ordinal=1 -> dev1\n"
          "cuDevicePrimaryCtxRetain dev1 -> ctx1\n"
          "cuCtxPushCurrent ctx1\n"
          "cuEventCreate flags=2 -> ev1\n"
          "cuEventRecord ev1 stream=0x1234\n"
          "cuStreamWaitEvent stream=0x1 ev1\n"
          "cuCtxPopCurrent -> ctx1\n"
          "cuDevicePrimaryCtxRelease dev1\n");
    // Draining destroys what the pool holds, through the driver.
    CHECK(cuda.live_events() == 1);
    dlbridge::testing::DrainEventPools();
    CHECK(cuda.live_events() == 0);
  }
  if (kHipBuilt) {
    HipFake hip;
    hip.ClearLog();
    CHECK(OrderStreams({kDLROCM, 1}, 0x1234, 0));
    const size_t warm = hip.Log().size();
    for (int i = 0; i < 50; ++i) CHECK(OrderStreams({kDLROCM, 1}, 0x1000 + i, 0));
    const std::string log = hip.Log().substr(warm);
    CHECK(Count(log, "hipEventCreateWithFlags") == 0);
    CHECK(Count(log, "hipEventDestroy") == 0);
    CHECK(Count(log, "hipStreamWaitEvent stream=0x0 ev") == 50);
    CHECK(hip.live_events() == 1);
    CHECK(hip.current_device() == 0);
  }
#endif
}

// Not on Windows, which has no fork (nor the pool's fork generation:
// src/runtimes/runtime_backend.cpp).
#if defined(DLBRIDGE_TEST_FAKE_CUDA) && !defined(_WIN32)
TEST_CASE("STR-10 a forked child never reuses the parent's pooled events") {
  if (!kCudaBuilt) return;
  CudaFake cuda;
  cuda.ClearLog();
  REQUIRE(OrderStreams({kDLCUDA, 0}, 0x1234, 1));  // the parent's pool holds ev1
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child's pool is empty: it creates its own event instead of recording ev1.
    bool ok = false;
    try {
      ok = OrderStreams({kDLCUDA, 0}, 0x1234, 1);
    } catch (...) {
    }
    const std::string log = cuda.Log();
    _exit(ok && Count(log, "cuEventCreate") == 2 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cuda.live_events() == 1);  // the parent's pooled event is still its own
}
#endif
