// libtorch's own DLPack exchange as a baseline. Only torch headers here: libtorch bundles
// ATen/dlpack.h, which is DLPack 0.6 and must never meet the 1.x header in one translation unit.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "alloc_counter.h"
#include "bench_registry.h"

namespace dlbridge_bench {
namespace {

// The same shapes as bench_dlbridge.cpp: every extent 2, float32, contiguous.
at::Tensor MakeTorchTensor(benchmark::State& state) {
  return at::ones(std::vector<int64_t>(static_cast<size_t>(state.range(0)), 2), at::kFloat);
}

// at::toDLPack plus the consumer's deleter call (ToDLPack's counterpart).
void BM_TorchToDLPack(benchmark::State& state) {
  at::Tensor tensor = MakeTorchTensor(state);
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    DLManagedTensor* managed = at::toDLPack(tensor);
    benchmark::DoNotOptimize(managed);
    managed->deleter(managed);
  }
  ReportAllocs(state, before);
  if (tensor.use_count() != 1) state.SkipWithError("a tensor reference was not dropped");
}

// at::toDLPack then at::fromDLPack, then the result drops (RoundTrip's counterpart).
void BM_TorchRoundTrip(benchmark::State& state) {
  at::Tensor tensor = MakeTorchTensor(state);
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    at::Tensor imported = at::fromDLPack(at::toDLPack(tensor));
    benchmark::DoNotOptimize(imported.data_ptr());
  }
  ReportAllocs(state, before);
  if (tensor.use_count() != 1) state.SkipWithError("a tensor reference was not dropped");
}

void Ndims(benchmark::internal::Benchmark* b) { b->ArgName("ndim")->Arg(1)->Arg(4)->Arg(8); }

}  // namespace

void RegisterTorchBenchmarks() {
  benchmark::RegisterBenchmark("Torch/toDLPack", BM_TorchToDLPack)->Apply(Ndims);
  benchmark::RegisterBenchmark("Torch/RoundTrip", BM_TorchRoundTrip)->Apply(Ndims);
}

}  // namespace dlbridge_bench
