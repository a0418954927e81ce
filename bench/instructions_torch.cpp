// libtorch's rows of bench/instructions, in a program of their own: at::toDLPack + deleter,
// at::fromDLPack + drop, and the round trip, measured as bench/instructions_ops.cpp measures
// dlbridge's (CALLGRIND_ZERO_STATS, `runs` operations, CALLGRIND_DUMP_STATS_AT("<name>")).
// Its own process because libtorch may not start under valgrind at all: it loads libhwy, whose
// load-time timer probe runs RDTSCP, which valgrind cannot run on a CPU without it. The script
// then reports libtorch as unavailable and dlbridge's rows still come out.
// Only torch headers here: libtorch bundles ATen/dlpack.h, DLPack 0.6.
//   instructions_torch --runs N [--fail-under-valgrind]
// --fail-under-valgrind exits as valgrind does on an instruction it cannot run (status 132),
// but only under valgrind: it tests that path of bench/instructions on any CPU.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

alignas(256) unsigned char g_data[1 << 16];
int g_runs = 2000;
long g_deletes = 0;

// The same shapes as the dlbridge rows: float32, extents 2 (1 from the 13th on), contiguous.
std::vector<int64_t> Shape(int ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) shape[static_cast<size_t>(i)] = i < 12 ? 2 : 1;
  return shape;
}

// A producer's tensor over g_data, imported again and again: its deleter only counts.
struct Producer {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  explicit Producer(int ndim) : shape(Shape(ndim)), strides(shape.size()) {
    int64_t step = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      strides[static_cast<size_t>(i)] = step;
      step *= shape[static_cast<size_t>(i)];
    }
    DLTensor& t = managed.dl_tensor;
    t.data = g_data;
    t.device = {kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.data();
    managed.deleter = [](DLManagedTensor*) { ++g_deletes; };
  }
};

template <class T>
void Escape(T&& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

// Runs body() `g_runs` times between callgrind's zero and dump requests.
template <class Body>
void Measure(const std::string& name, Body&& body) {
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < g_runs; ++i) body();
  CALLGRIND_DUMP_STATS_AT(name.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) g_runs = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--fail-under-valgrind") == 0 && RUNNING_ON_VALGRIND) {
      std::fprintf(stderr, "instructions_torch: --fail-under-valgrind\n");
      return 132;
    }
  }
  if (g_runs < 1) g_runs = 1;
  for (int ndim : {1, 4, 8, 64}) {
    const std::string suffix = "/ndim:" + std::to_string(ndim);
    at::Tensor tensor = at::ones(Shape(ndim), at::kFloat);
    Escape(at::fromDLPack(at::toDLPack(tensor)));  // warm
    Measure("torch_export" + suffix, [&] {
      DLManagedTensor* managed = at::toDLPack(tensor);
      Escape(managed);
      managed->deleter(managed);
    });
    Measure("torch_roundtrip" + suffix, [&] {
      at::Tensor imported = at::fromDLPack(at::toDLPack(tensor));
      Escape(imported);
    });
    Producer producer(ndim);
    g_deletes = 0;
    Measure("torch_import" + suffix, [&] {
      at::Tensor imported = at::fromDLPack(&producer.managed);
      Escape(imported);
    });
    if (g_deletes != g_runs) {  // every drop ran the producer's deleter exactly once
      std::printf("FAILED: libtorch's import deleted %ld times, expected %d\n", g_deletes, g_runs);
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}
