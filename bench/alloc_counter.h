// Heap allocations of the calling thread, counted by the malloc family that alloc_counter.cpp
// interposes in the benchmark binary (so libdlbridge.so's and libtorch's calls count too).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

namespace dlbridge_bench {

struct AllocSnapshot {
  uint64_t allocs = 0;  ///< malloc, calloc, realloc (size > 0), memalign family, operator new.
  uint64_t bytes = 0;   ///< Bytes those calls asked for.
};

/// The calling thread's totals so far. Thread-local: other threads' allocations never count.
AllocSnapshot AllocsNow() noexcept;

/// Sets the counters allocs_per_op and alloc_bytes_per_op for what this thread allocated
/// since `before` (take it just before the timed loop), averaged over the iterations.
void ReportAllocs(benchmark::State& state, const AllocSnapshot& before);

/// Whether the interposition is live (a malloc in this binary is counted).
bool AllocCountingWorks();

}  // namespace dlbridge_bench
