// The benchmark binary's entry point: registers every benchmark and records the machine.
#include <benchmark/benchmark.h>
#include <dlbridge/version.h>
#include <dlpack/dlpack.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "alloc_counter.h"
#include "bench_registry.h"

namespace {

// Google Benchmark's context has the CPU count and caches but not the model, which the
// published table names.
std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

}  // namespace

int main(int argc, char** argv) {
  // Without the interposition every allocs_per_op would read 0: refuse to report that.
  if (!dlbridge_bench::AllocCountingWorks()) {
    std::fprintf(stderr, "dlbridge_bench: malloc interposition is not active\n");
    return 2;
  }
  benchmark::AddCustomContext("cpu_model", CpuModel());
  benchmark::AddCustomContext("hardware_threads",
                              std::to_string(std::thread::hardware_concurrency()));
  benchmark::AddCustomContext("compiler", __VERSION__);
  benchmark::AddCustomContext("dlbridge_version", std::to_string(DLBRIDGE_VERSION_MAJOR) + "." +
                                                      std::to_string(DLBRIDGE_VERSION_MINOR) + "." +
                                                      std::to_string(DLBRIDGE_VERSION_PATCH));
  benchmark::AddCustomContext("dlpack_header", std::to_string(DLPACK_MAJOR_VERSION) + "." +
                                                   std::to_string(DLPACK_MINOR_VERSION));
  dlbridge_bench::RegisterDlbridgeBenchmarks();
  dlbridge_bench::RegisterStreamBenchmarks();
  dlbridge_bench::RegisterBridgeBenchmarks();
#ifdef DLBRIDGE_BENCH_HAVE_TORCH
  benchmark::AddCustomContext("torch_baseline", "libtorch (Debian libtorch-dev)");
  dlbridge_bench::RegisterTorchBenchmarks();
#else
  benchmark::AddCustomContext("torch_baseline", "not built (libtorch-dev not found)");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
