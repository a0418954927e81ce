// dlbridge's exchange, each benchmark named after the API it measures, beside its baselines:
// a malloc+free pair of the export block's size (the floor) and memcpy of the same bytes.
// Every benchmark checks that each deleter and release ran exactly once per operation.
#include <benchmark/benchmark.h>
#include <dlbridge/dlbridge.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "bench_registry.h"

namespace dlbridge_bench {
namespace {

using dlbridge::FromDLPack;
using dlbridge::Tensor;
using dlbridge::TensorLayout;

constexpr DLDataType kFloat32{kDLFloat, 32, 1};
constexpr int64_t kExtent = 2;  // every dimension: 2^8 floats at ndim 8; the size is irrelevant
constexpr size_t kSmallFloats = 256;

// The block dlbridge's export allocates (src/dlpack/to_dlpack.cpp ExportBlock): the managed struct,
// the hold (release, context, owner reference), then shape and strides. Mirrored, not included:
// the real one is private. The export benchmarks report alloc_bytes_per_op, which must equal it.
template <class Managed>
struct ExportBlockMirror {
  Managed managed;
  dlbridge::ReleaseFunction release;
  void* context;
  std::shared_ptr<const void> owner;
};

template <class Managed>
size_t ExportBlockBytes(int ndim) {
  return sizeof(ExportBlockMirror<Managed>) + 2 * sizeof(int64_t) * static_cast<size_t>(ndim);
}

template <class Managed>
Managed* Export(Tensor&& tensor) {
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    return dlbridge::ToDLPackVersioned(std::move(tensor));
  } else {
    return dlbridge::ToDLPack(std::move(tensor));
  }
}

Tensor MakeTensor(int ndim, const void* data, int64_t bytes, DLDataType dtype = kFloat32,
                  std::vector<int64_t> shape = {}) {
  Tensor tensor;
  tensor.descriptor.Set(reinterpret_cast<intptr_t>(data), bytes, "host");
  if (shape.empty()) shape.assign(static_cast<size_t>(ndim), kExtent);
  tensor.layout = TensorLayout(dtype, std::move(shape));
  return tensor;
}

// The producer's side of a hold, re-armed on the same Tensor every iteration: an export moves
// the hold out and leaves the layout, which is what a producer reusing its tensor does.
enum class Hold { kOwner, kRelease };

void CountRelease(void* context) { ++*static_cast<int64_t*>(context); }

class HoldSource {
 public:
  // `owner` also backs the data the tensors describe (null: the caller's buffer).
  HoldSource(Hold kind, std::shared_ptr<const void> owner)
      : kind_(kind), owner_(std::move(owner)) {}

  void Arm(dlbridge::MemoryDescriptor& descriptor) {
    if (kind_ == Hold::kOwner) {
      descriptor.SetOwner(owner_);  // one reference count increment
    } else {
      descriptor.SetRelease(&CountRelease, &releases_);
    }
  }

  const void* Data() const { return static_cast<const std::vector<float>*>(owner_.get())->data(); }

  // Every hold handed out must have been dropped exactly once by now.
  void Check(benchmark::State& state, int64_t holds) const {
    const bool ok = kind_ == Hold::kOwner ? owner_.use_count() == 1 : releases_ == holds;
    if (!ok) state.SkipWithError("a hold was not dropped exactly once per operation");
  }

 private:
  Hold kind_;
  std::shared_ptr<const void> owner_;
  int64_t releases_ = 0;
};

const char* HoldName(Hold hold) { return hold == Hold::kOwner ? "owner" : "release"; }

std::shared_ptr<const void> SmallBuffer() {
  return std::make_shared<std::vector<float>>(kSmallFloats, 1.0f);
}

constexpr int64_t kSmallBytes = static_cast<int64_t>(kSmallFloats * sizeof(float));

// A producer's managed tensor built once: its deleter counts and frees nothing, so every
// iteration can import it again and the import benchmarks measure only dlbridge.
template <class Managed>
class ReusableInput {
 public:
  ReusableInput(int ndim, void* data) {
    for (int i = 0; i < ndim; ++i) {
      dims_[i] = kExtent;
      int64_t stride = 1;
      for (int j = i + 1; j < ndim; ++j) stride *= kExtent;
      dims_[ndim + i] = stride;
    }
    DLTensor& t = managed_.dl_tensor;
    t.data = data;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = ndim;
    t.dtype = kFloat32;
    t.shape = dims_;
    t.strides = dims_ + ndim;
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
      managed_.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    }
    managed_.manager_ctx = &deletes_;
    managed_.deleter = &CountDelete;
  }

  Managed* Get() { return &managed_; }
  int64_t Deletes() const { return deletes_; }
  void ResetDeletes() { deletes_ = 0; }

 private:
  static void CountDelete(Managed* self) { ++*static_cast<int64_t*>(self->manager_ctx); }

  Managed managed_{};
  int64_t dims_[2 * TensorLayout::kInlineDims] = {};
  int64_t deletes_ = 0;
};

template <class Managed>
void CheckDeletes(benchmark::State& state, const ReusableInput<Managed>& input) {
  if (input.Deletes() != static_cast<int64_t>(state.iterations())) {
    state.SkipWithError("the input's deleter did not run exactly once per operation");
  }
}

// --- Baselines -------------------------------------------------------------------------------

// The floor: the one allocation an export cannot avoid, at the block's size.
template <class Managed>
void BM_Floor(benchmark::State& state) {
  const size_t bytes = ExportBlockBytes<Managed>(static_cast<int>(state.range(0)));
  state.SetLabel("malloc+free " + std::to_string(bytes) + " B");
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    void* block = std::malloc(bytes);
    benchmark::DoNotOptimize(block);  // escapes, so the pair cannot be elided
    std::free(block);
  }
  ReportAllocs(state, before);
}

// Two 1 GiB buffers for the size sweep, allocated and touched once for the whole run.
struct BigBuffers {
  static constexpr size_t kBytes = size_t{1} << 30;
  unsigned char* source;
  unsigned char* target;
};

const BigBuffers& Big() {
  static const BigBuffers buffers = [] {
    BigBuffers b{static_cast<unsigned char*>(std::aligned_alloc(4096, BigBuffers::kBytes)),
                 static_cast<unsigned char*>(std::aligned_alloc(4096, BigBuffers::kBytes))};
    if (b.source == nullptr || b.target == nullptr) std::abort();
    std::memset(b.source, 1, BigBuffers::kBytes);  // fault every page in before timing
    std::memset(b.target, 0, BigBuffers::kBytes);
    return b;
  }();
  return buffers;
}

void BM_Memcpy(benchmark::State& state) {
  const BigBuffers& big = Big();
  const size_t bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    std::memcpy(big.target, big.source, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}

// --- dlbridge --------------------------------------------------------------------------------

// Export of an ndim-d float32 tensor plus the consumer's deleter call.
template <class Managed>
void BM_Export(benchmark::State& state, Hold hold) {
  const int ndim = static_cast<int>(state.range(0));
  HoldSource source(hold, SmallBuffer());
  Tensor tensor = MakeTensor(ndim, source.Data(), kSmallBytes);
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    source.Arm(tensor.descriptor);
    Managed* managed = Export<Managed>(std::move(tensor));
    benchmark::DoNotOptimize(managed);
    managed->deleter(managed);
  }
  ReportAllocs(state, before);
  source.Check(state, static_cast<int64_t>(state.iterations()));
}

// Import of a producer's tensor, then the result drops, which calls the producer's deleter.
template <class Managed>
void BM_Import(benchmark::State& state) {
  static float data[kSmallFloats];
  ReusableInput<Managed> input(static_cast<int>(state.range(0)), data);
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    Tensor imported = FromDLPack(input.Get());
    benchmark::DoNotOptimize(imported);
  }
  ReportAllocs(state, before);
  CheckDeletes(state, input);
}

// Import then export unchanged: dlbridge hands back the producer's own tensor; then its deleter.
template <class Managed>
void BM_ReExport(benchmark::State& state) {
  static float data[kSmallFloats];
  ReusableInput<Managed> input(static_cast<int>(state.range(0)), data);
  Managed* probe = Export<Managed>(FromDLPack(input.Get()));
  const bool handedBack = probe == input.Get();
  probe->deleter(probe);
  input.ResetDeletes();
  if (!handedBack) {
    state.SkipWithError("re-export did not hand back the original managed tensor");
    return;
  }
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    Managed* managed = Export<Managed>(FromDLPack(input.Get()));
    benchmark::DoNotOptimize(managed);
    managed->deleter(managed);
  }
  ReportAllocs(state, before);
  CheckDeletes(state, input);
}

// Export, import of that export, then the import drops: the deleter frees the block and drops
// the hold.
void BM_RoundTrip(benchmark::State& state, Hold hold) {
  const int ndim = static_cast<int>(state.range(0));
  HoldSource source(hold, SmallBuffer());
  Tensor tensor = MakeTensor(ndim, source.Data(), kSmallBytes);
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    source.Arm(tensor.descriptor);
    Tensor imported = FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
    benchmark::DoNotOptimize(imported);
  }
  ReportAllocs(state, before);
  source.Check(state, static_cast<int64_t>(state.iterations()));
}

// The round trip of a 1-d uint8 host buffer of range(0) bytes: zero-copy means flat in size.
void BM_RoundTripBytes(benchmark::State& state) {
  const BigBuffers& big = Big();
  const int64_t bytes = state.range(0);
  HoldSource source(Hold::kRelease, nullptr);
  Tensor tensor = MakeTensor(1, big.source, bytes, DLDataType{kDLUInt, 8, 1}, {bytes});
  {
    // Shown, not claimed: the import describes the very bytes that were exported.
    source.Arm(tensor.descriptor);
    Tensor imported = FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
    if (imported.descriptor.GetPointer() != reinterpret_cast<intptr_t>(big.source) ||
        imported.descriptor.GetSizeInBytes() != bytes) {
      state.SkipWithError("the import does not describe the exported buffer");
      return;
    }
  }
  const AllocSnapshot before = AllocsNow();
  for (auto _ : state) {
    source.Arm(tensor.descriptor);
    Tensor imported = FromDLPack(dlbridge::ToDLPackVersioned(std::move(tensor)));
    benchmark::DoNotOptimize(imported);
  }
  ReportAllocs(state, before);
  source.Check(state, static_cast<int64_t>(state.iterations()) + 1);
}

void Ndims(benchmark::internal::Benchmark* b) { b->ArgName("ndim")->Arg(1)->Arg(4)->Arg(8); }

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgName("bytes")->RangeMultiplier(32)->Range(int64_t{1} << 10, int64_t{1} << 30);
}

std::string Name(const char* api, const char* form) { return std::string(api) + "/" + form; }

}  // namespace

void RegisterDlbridgeBenchmarks() {
  using benchmark::RegisterBenchmark;
  using Versioned = DLManagedTensorVersioned;
  using Legacy = DLManagedTensor;
  RegisterBenchmark("Floor/versioned", BM_Floor<Versioned>)->Apply(Ndims);
  RegisterBenchmark("Floor/legacy", BM_Floor<Legacy>)->Apply(Ndims);
  for (Hold hold : {Hold::kOwner, Hold::kRelease}) {
    RegisterBenchmark(Name("ToDLPackVersioned", HoldName(hold)).c_str(), BM_Export<Versioned>, hold)
        ->Apply(Ndims);
  }
  for (Hold hold : {Hold::kOwner, Hold::kRelease}) {
    RegisterBenchmark(Name("ToDLPack", HoldName(hold)).c_str(), BM_Export<Legacy>, hold)
        ->Apply(Ndims);
  }
  // An import's hold is always the producer's deleter: the forms here are the two structs.
  RegisterBenchmark("FromDLPack/versioned", BM_Import<Versioned>)->Apply(Ndims);
  RegisterBenchmark("FromDLPack/legacy", BM_Import<Legacy>)->Apply(Ndims);
  for (Hold hold : {Hold::kOwner, Hold::kRelease}) {
    RegisterBenchmark(Name("RoundTrip", HoldName(hold)).c_str(), BM_RoundTrip, hold)->Apply(Ndims);
  }
  RegisterBenchmark("ReExport/versioned", BM_ReExport<Versioned>)->Apply(Ndims);
  RegisterBenchmark("ReExport/legacy", BM_ReExport<Legacy>)->Apply(Ndims);
  RegisterBenchmark("RoundTripBytes", BM_RoundTripBytes)->Apply(Sizes);
  RegisterBenchmark("Memcpy", BM_Memcpy)->Apply(Sizes)->Unit(benchmark::kMicrosecond);
}

}  // namespace dlbridge_bench
