// dlbridge::vtk::Adopt: a tensor handed to a new vtkDataArray, its hold dropped exactly once
// when VTK frees the memory (spec/bridges.md VTK-4..VTK-7).
#include <doctest/doctest.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkSOADataArrayTemplate.h>
#include <vtkSmartPointer.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/callbacks.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/vtk.h"
#include "vtk_test_support.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
using dlbtest::ReleaseCounter;

namespace {

constexpr DLDataType kFloat32{kDLFloat, 32, 1};

int64_t Address(const void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); }

// A tensor over `data` (bytes) whose release counts into `counter`.
Tensor Described(void* data, int64_t bytes, TensorLayout layout, ReleaseCounter& counter) {
  Tensor tensor;
  tensor.descriptor.Set(Address(data), bytes, "host");
  tensor.descriptor.SetRelease(&ReleaseCounter::Release, &counter);
  tensor.layout = std::move(layout);
  return tensor;
}

// A release that records the thread it ran on.
struct ThreadRecorder {
  std::atomic<int> calls{0};
  std::thread::id where;
  static void Release(void* self) {
    auto* recorder = static_cast<ThreadRecorder*>(self);
    recorder->where = std::this_thread::get_id();
    ++recorder->calls;
  }
};

}  // namespace

TEST_CASE("VTK-4 each dtype VTK can hold gets its AOS array type") {
  struct Row {
    DLDataType dtype;
    int vtkType;
    const char* className;
  };
  const Row rows[] = {
      {{kDLInt, 8, 1}, VTK_SIGNED_CHAR, "vtkSignedCharArray"},
      {{kDLInt, 16, 1}, VTK_SHORT, "vtkShortArray"},
      {{kDLInt, 32, 1}, VTK_INT, "vtkIntArray"},
      {{kDLInt, 64, 1}, VTK_TYPE_INT64, "vtkDataArray"},
      {{kDLUInt, 8, 1}, VTK_UNSIGNED_CHAR, "vtkUnsignedCharArray"},
      {{kDLUInt, 16, 1}, VTK_UNSIGNED_SHORT, "vtkUnsignedShortArray"},
      {{kDLUInt, 32, 1}, VTK_UNSIGNED_INT, "vtkUnsignedIntArray"},
      {{kDLUInt, 64, 1}, VTK_TYPE_UINT64, "vtkDataArray"},
      {{kDLFloat, 32, 1}, VTK_FLOAT, "vtkFloatArray"},
      {{kDLFloat, 64, 1}, VTK_DOUBLE, "vtkDoubleArray"},
  };
  alignas(16) unsigned char bytes[64] = {};
  for (const Row& row : rows) {
    CAPTURE(row.className);
    CHECK(dlbridge::vtk::VtkTypeOfDataType(row.dtype) == row.vtkType);
    ReleaseCounter counter;
    auto array = dlbridge::vtk::Adopt(
        Described(bytes, sizeof bytes, TensorLayout(row.dtype, {2, 2}), counter));
    CHECK(array->GetDataType() == row.vtkType);
    CHECK(array->IsA(row.className));
    CHECK(array->GetNumberOfTuples() == 2);
    CHECK(array->GetNumberOfComponents() == 2);
    CHECK(array->GetVoidPointer(0) == static_cast<void*>(bytes));
    array = nullptr;
    CHECK(counter.calls == 1);
  }
  // AdoptOptions::id_type: a vtkIdTypeArray for connectivity.
  ReleaseCounter counter;
  dlbridge::vtk::AdoptOptions options;
  options.id_type = true;
  const DLDataType idDtype = vtktest::ExpectedDtype<vtkIdType>();
  auto ids = dlbridge::vtk::Adopt(
      Described(bytes, sizeof bytes, TensorLayout(idDtype, {4}), counter), options);
  CHECK(vtkIdTypeArray::SafeDownCast(ids) != nullptr);
  ids = nullptr;
  CHECK(counter.calls == 1);
}

TEST_CASE("VTK-4 dtypes VTK has no array of are refused, naming the dtype") {
  CHECK_DLB_ERROR(dlbridge::vtk::VtkTypeOfDataType({kDLFloat, 16, 1}), ErrorCode::kUnsupportedDtype,
                  "dtype float16 has no VTK array");
  CHECK_DLB_ERROR(dlbridge::vtk::VtkTypeOfDataType({kDLBool, 8, 1}), ErrorCode::kUnsupportedDtype,
                  "dtype bool has no VTK array");
  CHECK_DLB_ERROR(dlbridge::vtk::VtkTypeOfDataType({kDLFloat, 32, 4}), ErrorCode::kUnsupportedDtype,
                  "dtype float32x4 has no");
  CHECK_DLB_ERROR(dlbridge::vtk::VtkTypeOfDataType({kDLComplex, 64, 1}),
                  ErrorCode::kUnsupportedDtype, "accepted: int8");
}

TEST_CASE("VTK-6 Adopt is zero copy and the release runs once, when VTK frees the array") {
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  ReleaseCounter counter;
  const int64_t before = dlbridge::vtk::AdoptedHoldCount();
  Tensor tensor = Described(values.data(), 24, TensorLayout(kFloat32, {3, 2}), counter);
  vtkSmartPointer<vtkDataArray> array = dlbridge::vtk::Adopt(std::move(tensor));
  CHECK_FALSE(tensor.descriptor.HasOwnership());  // the hold moved into the hand-off
  CHECK(array->GetVoidPointer(0) == static_cast<void*>(values.data()));
  CHECK(array->GetNumberOfTuples() == 3);
  CHECK(array->GetComponent(2, 1) == 6.0);
  values[5] = 60;  // one memory: VTK sees the producer's writes
  CHECK(array->GetComponent(2, 1) == 60.0);
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before + 1);
  CHECK(counter.calls == 0);

  vtkSmartPointer<vtkDataArray> second = array;  // another VTK reference
  array = nullptr;
  CHECK(counter.calls == 0);
  second = nullptr;  // VTK frees the array: the release runs now
  CHECK(counter.calls == 1);
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before);
}

TEST_CASE("VTK-6 an owner hold moves into the array and is dropped at VTK's free") {
  auto owned = std::make_shared<std::vector<double>>(8, 2.5);
  std::weak_ptr<std::vector<double>> watch = owned;
  Tensor tensor;
  tensor.descriptor.Set(Address(owned->data()), 64, "host");
  tensor.descriptor.SetOwner(owned);
  tensor.layout = TensorLayout({kDLFloat, 64, 1}, {8});
  owned = nullptr;
  auto array = dlbridge::vtk::Adopt(std::move(tensor));
  CHECK(array->IsA("vtkDoubleArray"));
  CHECK(array->GetNumberOfComponents() == 1);
  CHECK(array->GetTuple1(7) == 2.5);
  CHECK_FALSE(watch.expired());
  array = nullptr;
  CHECK(watch.expired());
}

TEST_CASE("VTK-7 new memory given to the array drops the hold at that moment, once") {
  float values[4] = {1, 2, 3, 4};
  ReleaseCounter counter;
  auto array = dlbridge::vtk::Adopt(Described(values, 16, TensorLayout(kFloat32, {4}), counter));
  array->Resize(100);  // VTK reallocates (copying the 4 values) and frees ours
  CHECK(counter.calls == 1);
  CHECK(array->GetComponent(3, 0) == 4.0);
  CHECK(array->GetVoidPointer(0) != static_cast<void*>(values));
  array = nullptr;
  CHECK(counter.calls == 1);
}

TEST_CASE("VTK-7 the release runs on the thread that drops the last reference") {
  std::vector<int32_t> values(16, 7);
  ThreadRecorder recorder;
  Tensor tensor;
  tensor.descriptor.Set(Address(values.data()), 64, "host");
  tensor.descriptor.SetRelease(&ThreadRecorder::Release, &recorder);
  tensor.layout = TensorLayout({kDLInt, 32, 1}, {4, 4});
  auto array = dlbridge::vtk::Adopt(std::move(tensor));
  std::thread::id worker;
  std::thread thread([moved = std::move(array), &worker]() mutable {
    worker = std::this_thread::get_id();
    CHECK(moved->GetComponent(3, 3) == 7.0);
    moved = nullptr;
  });
  thread.join();
  CHECK(recorder.calls == 1);
  CHECK(recorder.where == worker);
  CHECK(recorder.where != std::this_thread::get_id());
}

TEST_CASE("VTK-7 arrays adopting on many threads each release once") {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<float> values(kThreads * kPerThread);
  std::vector<ReleaseCounter> counters(values.size());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const size_t k = static_cast<size_t>(t * kPerThread + i);
        auto array = dlbridge::vtk::Adopt(
            Described(&values[k], 4, TensorLayout(kFloat32, {1}), counters[k]));
        array = nullptr;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const ReleaseCounter& counter : counters) CHECK(counter.calls == 1);
}

TEST_CASE("VTK-6 arrays adopting one address each drop one hold, all exactly once") {
  float values[6] = {};
  ReleaseCounter a;
  ReleaseCounter b;
  auto first = dlbridge::vtk::Adopt(Described(values, 24, TensorLayout(kFloat32, {6}), a));
  auto second = dlbridge::vtk::Adopt(Described(values, 24, TensorLayout(kFloat32, {3, 2}), b));
  CHECK(first->GetVoidPointer(0) == second->GetVoidPointer(0));
  first = nullptr;
  CHECK(a.calls + b.calls == 1);  // one hold on the buffer remains for `second`
  second = nullptr;
  CHECK(a.calls == 1);
  CHECK(b.calls == 1);
}

TEST_CASE("VTK-7 at one address the hold reaching least drops first, so the rest stay covered") {
  // A short view and the whole buffer adopted at one address, in either order: when the
  // whole-buffer array goes first, the short view still reads, so the hold that drops must be
  // the short one (its bytes end first), never the one keeping the whole buffer valid.
  for (const bool wholeFirst : {true, false}) {
    CAPTURE(wholeFirst);
    float values[6] = {1, 2, 3, 4, 5, 6};
    ReleaseCounter whole;
    ReleaseCounter prefix;
    vtkSmartPointer<vtkDataArray> wholeArray;
    vtkSmartPointer<vtkDataArray> prefixArray;
    auto adoptWhole = [&] {
      wholeArray = dlbridge::vtk::Adopt(Described(values, 24, TensorLayout(kFloat32, {6}), whole));
    };
    auto adoptPrefix = [&] {
      prefixArray = dlbridge::vtk::Adopt(Described(values, 8, TensorLayout(kFloat32, {2}), prefix));
    };
    if (wholeFirst) {
      adoptWhole();
      adoptPrefix();
    } else {
      adoptPrefix();
      adoptWhole();
    }
    REQUIRE(wholeArray->GetVoidPointer(0) == prefixArray->GetVoidPointer(0));
    wholeArray = nullptr;
    CHECK(whole.calls == 0);  // still covers the prefix array
    CHECK(prefix.calls == 1);
    CHECK(prefixArray->GetComponent(1, 0) == 2.0);
    prefixArray = nullptr;
    CHECK(whole.calls == 1);
    CHECK(prefix.calls == 1);
  }
}

TEST_CASE("VTK-7 an adopted array exported and adopted again: both holds drop, newest first") {
  // The second array's hold owns the first array, at the same address and extent: the free of
  // the second must drop its own hold (the newest of equal reach), which lets the first array go
  // and drop the original hold; dropping the original first would leave a cycle that never frees.
  const int64_t heldBefore = dlbridge::vtk::AdoptedHoldCount();
  float values[6] = {1, 2, 3, 4, 5, 6};
  ReleaseCounter original;
  vtktest::DeleteCounter deletes;
  vtkSmartPointer<vtkDataArray> first =
      dlbridge::vtk::Adopt(Described(values, 24, TensorLayout(kFloat32, {3, 2}), original));
  deletes.Observe(first);
  vtkSmartPointer<vtkDataArray> second = dlbridge::vtk::Adopt(dlbridge::vtk::Export(first));
  CHECK(dlbridge::vtk::AdoptedHoldCount() == heldBefore + 2);
  first = nullptr;
  CHECK(deletes.deletes == 0);  // the second array's hold owns the first
  CHECK(second->GetComponent(2, 1) == 6.0);
  second = nullptr;
  CHECK(deletes.deletes == 1);
  CHECK(original.calls == 1);
  CHECK(dlbridge::vtk::AdoptedHoldCount() == heldBefore);
}

TEST_CASE("VTK-7 a shallow copy shares the buffer and keeps the hold until it goes too") {
  float values[6] = {1, 2, 3, 4, 5, 6};
  ReleaseCounter counter;
  auto array = dlbridge::vtk::Adopt(Described(values, 24, TensorLayout(kFloat32, {3, 2}), counter));
  vtkSmartPointer<vtkFloatArray> copy = vtkSmartPointer<vtkFloatArray>::New();
  copy->ShallowCopy(array);
  CHECK(copy->GetVoidPointer(0) == static_cast<void*>(values));
  array = nullptr;
  CHECK(counter.calls == 0);  // VTK frees the buffer only with its last array
  CHECK(copy->GetComponent(2, 1) == 6.0);
  copy = nullptr;
  CHECK(counter.calls == 1);
}

TEST_CASE("VTK-7 a release that throws is swallowed and counted") {
  struct Throwing {
    static void Release(void*) { throw std::runtime_error("release failed"); }
  };
  float values[2] = {};
  Tensor tensor;
  tensor.descriptor.Set(Address(values), 8, "host");
  tensor.descriptor.SetRelease(&Throwing::Release, nullptr);
  tensor.layout = TensorLayout(kFloat32, {2});
  auto array = dlbridge::vtk::Adopt(std::move(tensor));
  const int64_t before = dlbridge::CallbackExceptionCount();
  array = nullptr;
  CHECK(dlbridge::CallbackExceptionCount() == before + 1);
}

TEST_CASE("VTK-5 refused tensors keep their hold with the caller") {
  alignas(16) float values[16] = {};
  ReleaseCounter counter;
  const int64_t before = dlbridge::vtk::AdoptedHoldCount();
  auto refuse = [&](Tensor tensor, ErrorCode code, const char* text) {
    CHECK_DLB_ERROR(dlbridge::vtk::Adopt(std::move(tensor)), code, text);
    CHECK(tensor.descriptor.HasOwnership());  // unchanged: the caller's to drop
    CHECK(counter.calls == 0);
  };
  SUBCASE("device memory") {
    Tensor tensor = Described(values, 64, TensorLayout(kFloat32, {16}), counter);
    tensor.descriptor.SetMemorySpace("cuda");
    refuse(std::move(tensor), ErrorCode::kUnsupportedDevice,
           "dlbridge::vtk::Adopt: memory space \"cuda\" (device type kDLCUDA) is not "
           "host-readable");
  }
  SUBCASE("a host space with a device type that is not the CPU") {
    Tensor tensor = Described(values, 64, TensorLayout(kFloat32, {16}), counter);
    tensor.device = {kDLCUDA, 0};
    refuse(std::move(tensor), ErrorCode::kUnsupportedDevice,
           "memory space \"host\" (device type kDLCUDA) is not host-readable");
  }
  SUBCASE("three dimensions") {
    refuse(Described(values, 64, TensorLayout(kFloat32, {2, 2, 4}), counter),
           ErrorCode::kInvalidShape,
           "ndim 3 (shape [2, 2, 4], strides [8, 4, 1]); a vtkDataArray (values, or tuples x "
           "components) takes ndim 1 to 2");
  }
  SUBCASE("non-contiguous strides") {
    refuse(Described(values, 64, TensorLayout(kFloat32, {4, 2}, {2, 4}), counter),
           ErrorCode::kInvalidStrides,
           "strides[1] is 4 (shape [4, 2], strides [2, 4]); a vtkDataArray (values, or "
           "tuples x components) needs C-contiguous strides");
  }
  SUBCASE("a dtype VTK has no array of") {
    refuse(Described(values, 64, TensorLayout({kDLFloat, 16, 1}, {8}), counter),
           ErrorCode::kUnsupportedDtype, "dtype float16 has no VTK array");
  }
  SUBCASE("a dtype VTK has no array of, element zero not aligned to it: the dtype") {
    refuse(Described(values, 64, TensorLayout({kDLFloat, 16, 1}, {8}, {}, 1), counter),
           ErrorCode::kUnsupportedDtype, "dtype float16 has no VTK array");
  }
  SUBCASE("read-only") {
    Tensor tensor = Described(values, 64, TensorLayout(kFloat32, {16}), counter);
    tensor.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    refuse(std::move(tensor), ErrorCode::kReadOnly, "the tensor is read-only");
  }
  SUBCASE("misaligned data") {
    refuse(Described(values, 64, TensorLayout(kFloat32, {4}, {}, 2), counter),
           ErrorCode::kInvalidArgument, "element zero (byte offset 2) is not aligned to 4 bytes");
  }
  SUBCASE("a layout outside the descriptor's bytes") {
    refuse(Described(values, 64, TensorLayout(kFloat32, {17}), counter), ErrorCode::kOutOfBounds,
           "");
  }
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before);
  CHECK(counter.calls == 1);  // the refused tensor was dropped by `refuse`, once
}

TEST_CASE("VTK-5 a tensor that holds nothing needs allow_unowned") {
  float values[4] = {1, 2, 3, 4};
  Tensor tensor;
  tensor.descriptor.Set(Address(values), 16, "host");
  tensor.layout = TensorLayout(kFloat32, {4});
  CHECK_DLB_ERROR(dlbridge::vtk::Adopt(std::move(tensor)), ErrorCode::kNoHold, "");
  dlbridge::vtk::AdoptOptions options;
  options.allow_unowned = true;
  const int64_t before = dlbridge::vtk::AdoptedHoldCount();
  auto array = dlbridge::vtk::Adopt(std::move(tensor), options);
  CHECK(array->GetVoidPointer(0) == static_cast<void*>(values));
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before);  // nothing to drop: VTK never frees it
  array = nullptr;
  CHECK(values[3] == 4);
}

TEST_CASE("VTK-5 a tensor without elements gets an empty array and its hold dropped at once") {
  float values[1] = {};
  ReleaseCounter counter;
  auto array = dlbridge::vtk::Adopt(Described(values, 4, TensorLayout(kFloat32, {0, 3}), counter));
  CHECK(counter.calls == 1);
  CHECK(array->GetNumberOfTuples() == 0);
  CHECK(array->GetNumberOfComponents() == 3);
  array = nullptr;
  CHECK(counter.calls == 1);
}

TEST_CASE("VTK-6 Export then Adopt: a second VTK array on the first one's memory") {
  vtktest::DeleteCounter deletes;
  auto source = vtkSmartPointer<vtkFloatArray>::New();
  source->SetNumberOfComponents(3);
  source->SetNumberOfTuples(2);
  for (vtkIdType i = 0; i < 6; ++i) source->SetValue(i, static_cast<float>(i));
  deletes.Observe(source);
  auto adopted = dlbridge::vtk::Adopt(dlbridge::vtk::Export(source));
  CHECK(adopted->GetVoidPointer(0) == source->GetVoidPointer(0));
  CHECK(adopted->GetNumberOfComponents() == 3);
  source = nullptr;
  CHECK(deletes.deletes == 0);  // the adopted array holds the source
  CHECK(adopted->GetComponent(1, 2) == 5.0);
  adopted = nullptr;
  CHECK(deletes.deletes == 1);
}

TEST_CASE("VTK-15 one tensor per component adopts as a struct-of-arrays array, each freed once") {
  constexpr int kComponents = 7;  // no component limit
  std::vector<std::vector<float>> values(kComponents, std::vector<float>(4));
  std::vector<ReleaseCounter> counters(kComponents);
  std::vector<Tensor> parts;
  for (int c = 0; c < kComponents; ++c) {
    for (int t = 0; t < 4; ++t) values[c][t] = static_cast<float>(10 * c + t);
    parts.push_back(Described(values[c].data(), 16, TensorLayout(kFloat32, {4}), counters[c]));
  }
  const int64_t before = dlbridge::vtk::AdoptedHoldCount();
  vtkSmartPointer<vtkDataArray> soa = dlbridge::vtk::AdoptComponents(std::move(parts));
  auto* typed = vtkSOADataArrayTemplate<float>::SafeDownCast(soa);
  REQUIRE(typed != nullptr);
  CHECK(soa->GetNumberOfComponents() == kComponents);
  CHECK(soa->GetNumberOfTuples() == 4);
  CHECK(typed->GetComponentArrayPointer(5) == values[5].data());  // zero copy
  CHECK(soa->GetComponent(3, 6) == doctest::Approx(63.0));
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before + kComponents);
  for (const Tensor& part : parts) CHECK_FALSE(part.descriptor.HasOwnership());
  for (const ReleaseCounter& counter : counters) CHECK(counter.calls == 0);
  soa = nullptr;  // VTK frees every component: each hold drops once
  for (const ReleaseCounter& counter : counters) CHECK(counter.calls == 1);
  CHECK(dlbridge::vtk::AdoptedHoldCount() == before);
}

TEST_CASE("VTK-15 a refused component leaves every component's hold with the caller") {
  std::vector<float> x(4), y(3);
  ReleaseCounter cx, cy;
  std::vector<Tensor> parts;
  parts.push_back(Described(x.data(), 16, TensorLayout(kFloat32, {4}), cx));
  parts.push_back(Described(y.data(), 12, TensorLayout(kFloat32, {3}), cy));
  CHECK_DLB_ERROR(dlbridge::vtk::AdoptComponents(std::move(parts)), ErrorCode::kInvalidShape,
                  "component 1 is 3 values of float32 but component 0 is 4 values");
  std::vector<Tensor> flat;
  flat.push_back(Described(x.data(), 16, TensorLayout(kFloat32, {2, 2}), cx));
  CHECK_DLB_ERROR(dlbridge::vtk::AdoptComponents(std::move(flat)), ErrorCode::kInvalidShape,
                  "component 0: the tensor has ndim 2");
  CHECK_DLB_ERROR(dlbridge::vtk::AdoptComponents({}), ErrorCode::kInvalidArgument,
                  "0 component tensors");
  CHECK(parts[0].descriptor.HasOwnership());
  CHECK(parts[1].descriptor.HasOwnership());
  CHECK(flat[0].descriptor.HasOwnership());
  CHECK(cx.calls + cy.calls == 0);
}
