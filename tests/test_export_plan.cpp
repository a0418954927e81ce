// The prepared export (spec/validation.md EXP-14..EXP-16): ExportPlan checks once without
// moving the hold, then emits as often as needed, each emission with its own keep-alive.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "counting.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/testing.h"

using dlbridge::ErrorCode;
using dlbridge::ExportAllocator;
using dlbridge::ExportKind;
using dlbridge::ExportOptions;
using dlbridge::ExportPlan;
using dlbridge::KeepAlive;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
using namespace dlbtest;

namespace {

// Counts the blocks an allocator handed out and took back.
struct CountingAllocator {
  static inline int allocated = 0;
  static inline int freed = 0;
  static inline bool fail = false;
  static void* Allocate(size_t bytes) {
    if (fail) return nullptr;
    ++allocated;
    return std::malloc(bytes);
  }
  static void Deallocate(void* block, KeepAlive keepAlive) {
    ++freed;
    std::free(block);
    if (keepAlive.release != nullptr) keepAlive.release(keepAlive.context);
  }
  static ExportAllocator Get() { return ExportAllocator{&Allocate, &Deallocate}; }
};

// The Error a call throws (code and message), for comparing two calls.
template <class F>
std::pair<ErrorCode, std::string> ErrorOf(F&& f) {
  try {
    f();
  } catch (const dlbridge::Error& e) {
    return {e.code(), e.what()};
  }
  return {ErrorCode::kInvalidArgument, "no error"};
}

// A model CUDA runtime that says every pointer is device memory of ordinal 5.
struct Ordinal5 : dlbridge::testing::FakeRuntime {
  dlbridge::PointerInfo Query(const void*, void*) const override {
    return dlbridge::PointerInfo{dlbridge::PointerKind::kDevice, 5, nullptr};
  }
};

}  // namespace

TEST_CASE("EXP-14 prepare checks like ToDLPackVersioned, resolves the device, keeps the hold") {
  Buffer buf;
  ReleaseCounter c;
  SUBCASE("a good tensor: the plan says what every emission carries") {
    Tensor t = HostTensor(buf, c, F32({2, 3}, {}, 8));
    t.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    ExportOptions o;
    o.read_only = true;
    const ExportPlan plan(t, ExportKind::kVersioned, o);
    CHECK(t.descriptor.HasOwnership());
    CHECK((t.descriptor.GetRelease() == &ReleaseCounter::Release));
    CHECK(plan.Kind() == ExportKind::kVersioned);
    CHECK(plan.Device().device_type == kDLCPU);
    CHECK(plan.Device().device_id == 0);
    CHECK(plan.Flags() == DLPACK_FLAG_BITMASK_READ_ONLY);  // EXP-7, EXP-8 as on export
    CHECK(plan.Data() == buf.bytes + 8);                   // EXP-17: element zero, byte_offset 0
    CHECK(plan.ByteOffset() == 0);
    CHECK(plan.Layout() == t.layout);
    const DLTensor view = plan.View();
    CHECK(view.data == buf.bytes + 8);
    CHECK(view.ndim == 2);
    CHECK(view.shape[1] == 3);
    CHECK(view.strides[0] == 3);
    CHECK(view.byte_offset == 0);
    ExportOptions keep = o;
    keep.keep_byte_offset = true;
    const ExportPlan split(t, ExportKind::kVersioned, keep);
    CHECK(split.Data() == buf.bytes);
    CHECK(split.ByteOffset() == 8);
    // The same fields as the export itself.
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), o);
    CHECK(m->flags == plan.Flags());
    CHECK(m->dl_tensor.data == plan.Data());
    CHECK(m->dl_tensor.byte_offset == plan.ByteOffset());
    m->deleter(m);
    CHECK(c.calls == 1);
    // EXP-6 as on export: no elements, no data.
    const ExportPlan empty(HostTensor(buf, c, F32({0, 3}, {}, 4)));
    CHECK(empty.Data() == nullptr);
    CHECK(empty.ByteOffset() == 0);
  }
  SUBCASE("bad input: the same Error as the export, the hold kept") {
    struct Case {
      const char* name;
      void (*spoil)(Tensor&);
      ExportKind kind;
    };
    const Case cases[] = {
        {"out of bounds", [](Tensor& t) { t.descriptor.SetSizeInBytes(8); },
         ExportKind::kVersioned},
        {"bad dtype",
         [](Tensor& t) {
           t.layout = TensorLayout({kDLFloat, 24, 1}, {2});
         },
         ExportKind::kVersioned},
        {"unknown flags", [](Tensor& t) { t.flags = uint64_t{1} << 40; }, ExportKind::kLegacy},
        {"read-only legacy", [](Tensor& t) { t.flags = DLPACK_FLAG_BITMASK_READ_ONLY; },
         ExportKind::kLegacy},
        {"device contradicts the space",
         [](Tensor& t) {
           t.device = {kDLCUDA, 0};
         },
         ExportKind::kVersioned},
        {"cpu with an ordinal",
         [](Tensor& t) {
           t.device = {kDLCPU, 1};
         },
         ExportKind::kLegacy},
        {"cuda without an ordinal", [](Tensor& t) { t.descriptor.SetMemorySpace("cuda"); },
         ExportKind::kVersioned},
        {"level_zero without a context",
         [](Tensor& t) { t.descriptor.SetMemorySpace("level_zero"); }, ExportKind::kVersioned},
    };
    for (const Case& k : cases) {
      CAPTURE(k.name);
      Tensor t = HostTensor(buf, c, F32({4}));
      k.spoil(t);
      const auto fromPlan = ErrorOf([&] { ExportPlan plan(t, k.kind); });
      CHECK(t.descriptor.HasOwnership());
      const auto fromExport = ErrorOf([&] {
        if (k.kind == ExportKind::kLegacy) {
          dlbridge::ToDLPack(std::move(t));
        } else {
          dlbridge::ToDLPackVersioned(std::move(t));
        }
      });
      CHECK(fromPlan.second != "no error");
      CHECK(fromPlan.first == fromExport.first);
      CHECK(fromPlan.second == fromExport.second);
      CHECK(t.descriptor.HasOwnership());
    }
    CHECK(c.calls == static_cast<int>(sizeof(cases) / sizeof(cases[0])));
    Tensor t = HostTensor(buf, c, F32({4}));
    t.descriptor.SetSizeInBytes(8);
    CHECK_DLB_ERROR(ExportPlan(t), ErrorCode::kOutOfBounds,
                    "ToDLPackVersioned: the layout reaches bytes [0, 16)");
  }
  SUBCASE("a missing GPU ordinal comes from the pointer query, asked once at preparation") {
    Ordinal5 cuda;
    dlbridge::testing::SetFakeRuntime(dlbridge::GpuRuntime::kCuda, &cuda);
    Tensor t = HostTensor(buf, c, F32({4}));
    t.descriptor.SetMemorySpace("cuda");
    const uint64_t before = dlbridge::testing::PointerQueryCount();
    const ExportPlan plan(t);
    CHECK(dlbridge::testing::PointerQueryCount() == before + 1);
    CHECK(plan.Device().device_type == kDLCUDA);
    CHECK(plan.Device().device_id == 5);
    for (int i = 0; i < 3; ++i) {
      DLManagedTensorVersioned* m = plan.EmitVersioned({});
      CHECK(m->dl_tensor.device.device_id == 5);
      m->deleter(m);
    }
    CHECK(dlbridge::testing::PointerQueryCount() == before + 1);
    dlbridge::testing::SetFakeRuntime(dlbridge::GpuRuntime::kCuda, nullptr);
  }
}

TEST_CASE(
    "EXP-15 prepare once, emit many: each deleter frees its block and calls its keep-alive "
    "once") {
  Buffer buf;
  ReleaseCounter hold;
  Tensor t = HostTensor(buf, hold, F32({2, 2}));
  SUBCASE("versioned, std::malloc") {
    const ExportPlan plan(t);
    ReleaseCounter keep[3];
    DLManagedTensorVersioned* m[3];
    for (int i = 0; i < 3; ++i) {
      m[i] = plan.EmitVersioned(KeepAlive{&ReleaseCounter::Release, &keep[i]});
      CHECK(m[i]->manager_ctx == &keep[i]);
      CHECK(m[i]->version.major == 1);
      CHECK(m[i]->version.minor == DLPACK_MINOR_VERSION);
      CHECK(m[i]->dl_tensor.data == buf.bytes);
      CHECK(m[i]->dl_tensor.shape[0] == 2);
      CHECK(m[i]->dl_tensor.strides[0] == 2);
    }
    CHECK(m[0] != m[1]);
    CHECK(m[0]->dl_tensor.shape != m[1]->dl_tensor.shape);  // each has its own dims
    for (int i = 2; i >= 0; --i) {
      CHECK(keep[i].calls == 0);
      m[i]->dl_tensor.ndim = -1;  // EXP-12: the deleter reads none of this
      m[i]->manager_ctx = nullptr;
      m[i]->deleter(m[i]);
      CHECK(keep[i].calls == 1);
    }
  }
  SUBCASE("legacy, a caller's allocator") {
    const ExportPlan plan(t, ExportKind::kLegacy);
    CountingAllocator::allocated = CountingAllocator::freed = 0;
    ReleaseCounter keep;
    DLManagedTensor* a =
        plan.EmitLegacy({&ReleaseCounter::Release, &keep}, CountingAllocator::Get());
    DLManagedTensor* b =
        plan.EmitLegacy({&ReleaseCounter::Release, &keep}, CountingAllocator::Get());
    CHECK(CountingAllocator::allocated == 2);  // one allocation per emission
    CHECK(a->manager_ctx == &keep);
    CHECK(a->dl_tensor.strides[1] == 1);
    a->deleter(a);
    CHECK(CountingAllocator::freed == 1);
    CHECK(keep.calls == 1);
    b->deleter(b);
    CHECK(CountingAllocator::freed == 2);
    CHECK(keep.calls == 2);
  }
  SUBCASE("no keep-alive: manager_ctx is NULL and the deleter frees only the tensor") {
    const ExportPlan plan(t);
    DLManagedTensorVersioned* m = plan.EmitVersioned({});
    CHECK(m->manager_ctx == nullptr);
    m->deleter(m);
  }
  SUBCASE("a failed emission does not call the keep-alive") {
    const ExportPlan plan(t);
    ReleaseCounter keep;
    const KeepAlive k{&ReleaseCounter::Release, &keep};
    CountingAllocator::fail = true;
    CHECK_DLB_ERROR(plan.EmitVersioned(k, CountingAllocator::Get()), ErrorCode::kOutOfMemory,
                    "ToDLPackVersioned: could not allocate the export block");
    CountingAllocator::fail = false;
    CHECK_DLB_ERROR(plan.EmitLegacy(k), ErrorCode::kInvalidArgument,
                    "ToDLPack: the plan was prepared for ToDLPackVersioned");
    const ExportPlan legacy(t, ExportKind::kLegacy);
    CHECK_DLB_ERROR(legacy.EmitVersioned(k), ErrorCode::kInvalidArgument,
                    "prepare one of ExportKind::kVersioned");
    ExportAllocator half;
    half.allocate = &CountingAllocator::Allocate;
    CHECK_DLB_ERROR(plan.EmitVersioned(k, half), ErrorCode::kInvalidArgument,
                    "ExportAllocator needs both allocate and deallocate, or neither");
    CHECK(keep.calls == 0);
  }
  CHECK(t.descriptor.HasOwnership());
  CHECK(hold.calls == 0);
}

TEST_CASE("EXP-16 the plan copies what it emits: a later change to the tensor cannot leak in") {
  Buffer buf;
  ReleaseCounter hold;
  std::vector<int64_t> shape(12, 1);  // past kInlineDims: the plan's copy is on the heap
  shape[0] = 3;
  auto t = std::make_unique<Tensor>(
      HostTensor(buf, hold, TensorLayout({kDLFloat, 32, 1}, shape, {}, 4)));
  const ExportPlan plan(*t, ExportKind::kVersioned);
  const ExportPlan small(HostTensor(buf, hold, F32({5})), ExportKind::kLegacy);
  // The tensor changes every field an emission carries, then goes away (its release runs).
  t->layout = F32({7, 7});
  t->descriptor.Set(buf.Address() + 64, 8, "cuda");
  t->device = {kDLCUDA, 3};
  t->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  t.reset();
  CHECK(hold.calls == 2);
  DLManagedTensorVersioned* m = plan.EmitVersioned({});
  CHECK(m->dl_tensor.ndim == 12);
  CHECK(m->dl_tensor.shape[0] == 3);
  CHECK(m->dl_tensor.strides[11] == 1);
  CHECK(m->dl_tensor.data == buf.bytes + 4);
  CHECK(m->dl_tensor.byte_offset == 0);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  CHECK(m->flags == 0);
  m->deleter(m);
  DLManagedTensor* l = small.EmitLegacy({});
  CHECK(l->dl_tensor.shape[0] == 5);
  l->deleter(l);
  // Copies of a plan are plans of their own.
  ExportPlan copy = plan;
  CHECK(copy.Layout() == plan.Layout());
  CHECK(copy.Layout().Shape().data != plan.Layout().Shape().data);
  DLManagedTensorVersioned* n = copy.EmitVersioned({});
  CHECK(n->dl_tensor.ndim == 12);
  n->deleter(n);
}
