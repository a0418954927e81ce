// Instructions per operation, for bench/instructions: every operation runs `runs` times between
// CALLGRIND_ZERO_STATS and CALLGRIND_DUMP_STATS_AT("<name>"), so a dump's total divided by
// `runs` is one operation. What one operation is, exactly:
//   export/ndim:N      ToDLPackVersioned(std::move(tensor)) + m->deleter(m), on a tensor armed
//                      before the measurement (Set, SetRelease and the layout are not counted)
//   import/ndim:N      FromDLPack(&producer) + dropping the Tensor (runs the producer's deleter)
//   roundtrip/ndim:N   FromDLPack(ToDLPackVersioned(std::move(tensor))) + dropping the result
//   reexport/ndim:N    ToDLPackVersioned(FromDLPack(&producer)) + m->deleter(m) (the original)
//   floor/ndim:N       malloc + free of the export block's size at that ndim
// libtorch's rows (torch_*/ndim:N) are bench/instructions_torch.cpp's, a process of their own.
// The loop around each (an increment and a branch) is counted too, the floor's included.
// Float32, extents 2 (1 from the 13th dimension on, so that the count stays 4096 elements at
// ndim 64), C-contiguous, host; bytes:N rows are 1-d uint8 tensors of N bytes
// (the 1 GiB one describes a fake range: none of these operations touches the data).
// Uses only the public API, so the same file measures any version of dlbridge. Outside
// valgrind the client requests do nothing; the program still checks every release and deleter.
#include <valgrind/callgrind.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlbridge/dlbridge.h"

namespace {

constexpr int kMaxNdim = 64;
alignas(256) unsigned char g_data[1 << 16];
long g_releases = 0;
long g_deletes = 0;
long g_expected = 0;  // releases and deletes the measured operations must have run
int g_runs = 2000;

void Release(void*) noexcept { ++g_releases; }

template <class T>
void Escape(T&& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

int64_t Extent(int dim) { return dim < 12 ? 2 : 1; }

std::vector<int64_t> Shape(int ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) shape[static_cast<size_t>(i)] = Extent(i);
  return shape;
}

int64_t DataAddress() { return static_cast<int64_t>(reinterpret_cast<intptr_t>(g_data)); }

// `count` tensors armed for export: float32 extents 2, or (bytes > 0) 1-d uint8 of `bytes`.
std::vector<dlbridge::Tensor> Armed(int count, int ndim, int64_t bytes = 0) {
  std::vector<dlbridge::Tensor> tensors(static_cast<size_t>(count));
  for (dlbridge::Tensor& t : tensors) {
    if (bytes > 0) {
      t.descriptor.Set(DataAddress(), bytes, "host");
      t.layout = dlbridge::TensorLayout(DLDataType{kDLUInt, 8, 1}, std::vector<int64_t>{bytes});
    } else {
      t.descriptor.Set(DataAddress(), int64_t{4} << (ndim < 12 ? ndim : 12), "host");
      t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, Shape(ndim));
    }
    t.descriptor.SetRelease(&Release, nullptr);
  }
  return tensors;
}

// A producer's tensor, imported again and again: its deleter only counts.
struct Producer {
  DLManagedTensorVersioned managed{};
  int64_t shape[kMaxNdim];
  int64_t strides[kMaxNdim];
  Producer(int ndim, int64_t bytes = 0) {
    int64_t step = 1;
    for (int i = ndim - 1; i >= 0; --i) {
      shape[i] = bytes > 0 ? bytes : Extent(i);
      strides[i] = step;
      step *= shape[i];
    }
    managed.version = {1, DLPACK_MINOR_VERSION};
    managed.deleter = [](DLManagedTensorVersioned*) { ++g_deletes; };
    DLTensor& t = managed.dl_tensor;
    t.data = g_data;
    t.device = {kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = bytes > 0 ? DLDataType{kDLUInt, 8, 1} : DLDataType{kDLFloat, 32, 1};
    t.shape = shape;
    t.strides = strides;
  }
};

// Runs body(i) for i in [0, runs) between callgrind's zero and dump requests.
template <class Body>
void Measure(const std::string& name, Body&& body) {
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < g_runs; ++i) body(i);
  CALLGRIND_DUMP_STATS_AT(name.c_str());
}

size_t BlockBytes(int ndim) {
  // The export block: the managed struct, release, context, deallocate, an owner reference, the
  // record's ndim and the spare flag, then shape and strides; up to 8 dimensions, every block
  // has the 8-dimension size and room for the record (a DLTensor, flags, the span and the first
  // byte) and its private shape and strides (src/dlpack/export_internal.h, LT-8, RT-6). The
  // size is what the floor allocates.
  const size_t header =
      sizeof(DLManagedTensorVersioned) + 3 * sizeof(void*) + sizeof(std::shared_ptr<void>) + 8;
  if (ndim > 8) return header + 2 * sizeof(int64_t) * static_cast<size_t>(ndim);
  return header + sizeof(DLTensor) + 8 + 4 * 8 + 4 * sizeof(int64_t) * 8;
}

void Floor(const std::string& suffix, int ndim) {
  const size_t bytes = BlockBytes(ndim);
  Measure("floor" + suffix, [bytes](int) {
    void* p = std::malloc(bytes);
    Escape(p);
    std::free(p);
  });
}

// The four operations on one shape (bytes > 0: a 1-d uint8 tensor of that many bytes).
void Operations(const std::string& suffix, int ndim, int64_t bytes) {
  {  // warm: first-use initialisation (the runtime registry, the allocator's bins) is not measured
    std::vector<dlbridge::Tensor> warm = Armed(1, ndim, bytes);
    Producer producer(ndim, bytes);
    dlbridge::Tensor imported =
        dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(warm[0])));
    dlbridge::Tensor again = dlbridge::FromDLPack(&producer.managed);
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(again));
    m->deleter(m);
    g_expected += 2;
  }
  std::vector<dlbridge::Tensor> tensors = Armed(g_runs, ndim, bytes);
  Measure("export" + suffix, [&](int i) {
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(tensors[i]));
    Escape(m);
    m->deleter(m);
  });
  Producer producer(ndim, bytes);
  Measure("import" + suffix, [&](int) {
    dlbridge::Tensor imported = dlbridge::FromDLPack(&producer.managed);
    Escape(imported);
  });
  tensors = Armed(g_runs, ndim, bytes);
  Measure("roundtrip" + suffix, [&](int i) {
    dlbridge::Tensor imported =
        dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensors[i])));
    Escape(imported);
  });
  Measure("reexport" + suffix, [&](int) {
    DLManagedTensorVersioned* m =
        dlbridge::ToDLPackVersioned(dlbridge::FromDLPack(&producer.managed));
    Escape(m);
    m->deleter(m);
  });
  // Per run: export and round trip release once each; import and re-export delete once each.
  g_expected += 4L * g_runs;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) g_runs = std::atoi(argv[++i]);
  }
  if (g_runs < 1) g_runs = 1;
  std::printf("runs %d\n", g_runs);
  Floor("/ndim:0", 0);  // warm the allocator's bins once, then measure each size
  for (int ndim : {1, 2, 4, 8, 16, 32, 64}) {
    const std::string suffix = "/ndim:" + std::to_string(ndim);
    Floor(suffix, ndim);
    Operations(suffix, ndim, 0);
  }
  Operations("/bytes:1KiB", 1, int64_t{1} << 10);
  Operations("/bytes:1GiB", 1, int64_t{1} << 30);
  // Every hold and every producer tensor came back exactly once per operation.
  if (g_releases + g_deletes != g_expected) {
    std::printf("FAILED: releases %ld + deletes %ld, expected %ld in all\n", g_releases, g_deletes,
                g_expected);
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
