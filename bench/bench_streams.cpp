// Stream ordering against the fake CUDA driver (tests/fakes/fake_cuda_driver.c, loaded as
// the driver through DLBRIDGE_CUDA_LIBRARY): OrderStreams' own cost per exchange, and the
// events it creates per exchange, which the fake counts (spec/streams.md STR-10: 0 in steady
// state; 1 created and 1 destroyed per exchange before the pool).
#include <benchmark/benchmark.h>
#include <dlbridge/dlbridge.h>

#include <cstdlib>

#include "bench_registry.h"

#if defined(DLBRIDGE_BENCH_FAKE_CUDA)
#include <dlfcn.h>

namespace dlbridge_bench {
namespace {

// The fake's counters, from the same library dlbridge loads (one copy of its state).
struct FakeCuda {
  long (*events_created)(void) = nullptr;
  void (*quiet)(int) = nullptr;
};

const FakeCuda& Fake() {
  static const FakeCuda fake = [] {
    FakeCuda f;
    void* handle = dlopen(DLBRIDGE_BENCH_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return f;
    f.events_created =
        reinterpret_cast<long (*)(void)>(dlsym(handle, "fake_driver_events_created"));
    f.quiet = reinterpret_cast<void (*)(int)>(dlsym(handle, "fake_driver_quiet"));
    return f;
  }();
  return fake;
}

void BM_OrderStreams(benchmark::State& state) {
  const FakeCuda& fake = Fake();
  if (fake.events_created == nullptr || fake.quiet == nullptr) {
    state.SkipWithError("the fake CUDA driver could not be loaded");
    return;
  }
  fake.quiet(1);
  const DLDevice device{kDLCUDA, 0};
  bool ordered = false;
  try {
    ordered = dlbridge::OrderStreams(device, 0x1234, 1);  // loads the driver, warms the pool
  } catch (const dlbridge::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  if (!ordered) {
    state.SkipWithError("OrderStreams ordered nothing");
    return;
  }
  const long before = fake.events_created();
  for (auto _ : state) benchmark::DoNotOptimize(dlbridge::OrderStreams(device, 0x1234, 1));
  const long created = fake.events_created() - before;
  state.counters["event_creations_per_exchange"] =
      static_cast<double>(created) / static_cast<double>(state.iterations());
  fake.quiet(0);
}

}  // namespace

void RegisterStreamBenchmarks() {
  // This process's CUDA driver is the fake (no other benchmark asks CUDA anything).
  setenv("DLBRIDGE_CUDA_LIBRARY", DLBRIDGE_BENCH_FAKE_CUDA, 1);
  benchmark::RegisterBenchmark("OrderStreams/fake_cuda", BM_OrderStreams);
}

}  // namespace dlbridge_bench
#else
namespace dlbridge_bench {
void RegisterStreamBenchmarks() {}  // no fake driver in this build (not UNIX, or Apple)
}  // namespace dlbridge_bench
#endif
