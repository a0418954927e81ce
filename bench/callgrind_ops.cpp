// Instruction counts per operation, for bench/callgrind: each operation runs kRuns times
// between CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT("<name>"), so a dump's total
// divided by kRuns is what one operation costs, loop included (a few instructions).
// Uses only the public API, so the same file measures any version of dlbridge.
// Outside valgrind the client requests do nothing and the program just runs the loops.
#include <valgrind/callgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "dlbridge/dlbridge.h"

namespace {

constexpr int kRuns = 2000;
alignas(256) float g_data[4096];
int g_releases = 0;
int g_deletes = 0;

void Release(void*) noexcept { ++g_releases; }

template <class T>
void Escape(T&& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

dlbridge::Tensor MakeTensor(int ndim) {
  dlbridge::Tensor t;
  t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(g_data)), sizeof g_data,
                   "host");
  t.descriptor.SetRelease(&Release, nullptr);
  std::vector<int64_t> shape(static_cast<size_t>(ndim), 2);
  t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, shape);
  return t;
}

// A producer's tensor, reused: its deleter only counts.
struct Producer {
  DLManagedTensorVersioned managed{};
  int64_t shape[8];
  int64_t strides[8];
  explicit Producer(int ndim) {
    int64_t step = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      shape[i] = 2;
      strides[i] = step;
      step *= 2;
    }
    managed.version = {1, DLPACK_MINOR_VERSION};
    managed.deleter = [](DLManagedTensorVersioned*) { ++g_deletes; };
    DLTensor& t = managed.dl_tensor;
    t.data = g_data;
    t.device = {kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = strides;
  }
};

template <class Body>
void Measure(const std::string& name, Body&& body) {
  body();  // warm: first-use initialisation is not what is measured
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < kRuns; ++i) body();
  CALLGRIND_DUMP_STATS_AT(name.c_str());
}

}  // namespace

int main() {
  std::printf("runs %d\n", kRuns);
  Measure("floor", [] {
    void* p = std::malloc(sizeof(DLManagedTensorVersioned) + 16 * sizeof(int64_t));
    Escape(p);
    std::free(p);
  });
  for (int ndim : {1, 4, 8}) {
    const std::string suffix = "/ndim:" + std::to_string(ndim);
    dlbridge::Tensor tensor = MakeTensor(ndim);
    Measure("export" + suffix, [&] {
      tensor.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(g_data)),
                            sizeof g_data, "host");
      tensor.descriptor.SetRelease(&Release, nullptr);
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(tensor));
      Escape(m);
      m->deleter(m);
    });
    Producer producer(ndim);
    Measure("import" + suffix, [&] {
      dlbridge::Tensor imported = dlbridge::FromDLPack(&producer.managed);
      Escape(imported);
    });
    Measure("roundtrip" + suffix, [&] {
      tensor.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(g_data)),
                            sizeof g_data, "host");
      tensor.descriptor.SetRelease(&Release, nullptr);
      dlbridge::Tensor imported = dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
      Escape(imported);
    });
    Measure("reexport" + suffix, [&] {
      DLManagedTensorVersioned* m =
          dlbridge::ToDLPackVersioned(dlbridge::FromDLPack(&producer.managed));
      Escape(m);
      m->deleter(m);
    });
  }
  // Every hold and every producer tensor came back exactly once per run (warm-up included).
  const int expected = (kRuns + 1) * 3 * 2;
  if (g_releases != expected || g_deletes != expected) {
    std::printf("FAILED: releases %d, deletes %d, expected %d each\n", g_releases, g_deletes,
                expected);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
