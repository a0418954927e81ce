// Each benchmark file registers its own benchmarks; bench_main.cpp calls them in this order.
#pragma once

namespace dlbridge_bench {

void RegisterDlbridgeBenchmarks();  // bench_dlbridge.cpp: dlbridge, the floor, memcpy
void RegisterTorchBenchmarks();     // bench_torch.cpp: libtorch's DLPack (when built)
void RegisterStreamBenchmarks();    // bench_streams.cpp: OrderStreams on the fake CUDA driver
void RegisterBridgeBenchmarks();    // bench_bridges.cpp: each bridge built, beside its framework

}  // namespace dlbridge_bench
