// The Viskores bridge (spec/bridges.md, VSK-*): tensors adopted into ArrayHandles and read and
// written by Viskores' own algorithms and a worklet on the Serial device, the producer's
// release counted; refusals that leave the hold where it was; ArrayHandles exported as tensors
// and through DLPack.
#include <doctest/doctest.h>
#include <viskores/cont/ArrayHandle.h>
#include <viskores/cont/ErrorBadAllocation.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/viskores.h"
#include "viskores_test_support.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
namespace vsk = dlbridge::viskores;
namespace vc = viskores::cont;

namespace {

// A host buffer of `n` values whose release counts, and on which thread it ran.
template <class T>
struct Producer {
  std::vector<T> values;
  int releases = 0;
  std::thread::id released_on{};
  explicit Producer(std::size_t n, T first = T(0)) : values(n) {
    std::iota(values.begin(), values.end(), first);
  }
  static void Release(void* self) {
    auto* p = static_cast<Producer*>(self);
    ++p->releases;
    p->released_on = std::this_thread::get_id();
  }
  // A tensor of `shape` over the values, holding this producer's release.
  Tensor Make(std::vector<int64_t> shape) {
    Tensor t;
    t.descriptor.Set(values.data(), static_cast<int64_t>(values.size() * sizeof(T)));
    t.descriptor.SetRelease(&Release, this);
    t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<T>(), std::move(shape));
    return t;
  }
};

using dlbtest::Double;
using dlbtest::Magnitudes;

template <class F>
ErrorCode CodeOf(F&& f) {
  try {
    f();
  } catch (const dlbridge::Error& e) {
    MESSAGE(std::string(e.what()));
    return e.code();
  }
  FAIL("no dlbridge::Error was thrown");
  return ErrorCode{};
}

}  // namespace

TEST_CASE("VSK-1 an adopted tensor is the ArrayHandle's memory and Viskores algorithms run on it") {
  Producer<float> p(8, 1.0f);
  {
    vc::ArrayHandleBasic<float> handle = vsk::Adopt<float>(p.Make({8}));
    CHECK(handle.GetNumberOfValues() == 8);
    CHECK(handle.GetReadPointer() == p.values.data());  // zero copy
    CHECK(vc::Algorithm::Reduce(handle, 0.0f) == doctest::Approx(36.0f));
    Double(handle);  // writes land in the producer's memory
    CHECK(p.values[7] == doctest::Approx(16.0f));
    CHECK(p.releases == 0);
    vc::ArrayHandle<float> copy = handle;
    handle = vc::ArrayHandleBasic<float>{};
    CHECK(p.releases == 0);  // a copy still holds the buffer
    vc::Algorithm::Sort(copy, viskores::SortGreater());
    CHECK(p.values[0] == doctest::Approx(16.0f));
  }
  CHECK(p.releases == 1);
}

TEST_CASE("VSK-1 the hold drops exactly once, on the thread that drops the last handle") {
  Producer<int32_t> p(16);
  auto handle = std::make_unique<vc::ArrayHandleBasic<int32_t>>(vsk::Adopt<int32_t>(p.Make({16})));
  std::thread other([h = std::move(handle)]() mutable { h.reset(); });
  const std::thread::id other_id = other.get_id();
  other.join();
  CHECK(p.releases == 1);
  CHECK(p.released_on == other_id);
}

TEST_CASE("VSK-1 rows adopt as Viskores Vecs, fixed or runtime-sized, and a worklet reads them") {
  Producer<double> p(12);  // (4, 3): rows (0,1,2), (3,4,5), ...
  {
    auto vecs = vsk::AdoptVec<double, 3>(p.Make({4, 3}));
    REQUIRE(vecs.GetNumberOfValues() == 4);
    CHECK(vecs.ReadPortal().Get(1) == viskores::Vec3f_64(3, 4, 5));
    vc::ArrayHandle<double> lengths = Magnitudes(vecs);
    CHECK(lengths.ReadPortal().Get(1) == doctest::Approx(std::sqrt(50.0)));
  }
  CHECK(p.releases == 1);

  Producer<float> q(10);  // (5, 2)
  {
    auto runtime = vsk::AdoptRuntimeVec<float>(q.Make({5, 2}));
    CHECK(runtime.GetNumberOfComponents() == 2);
    CHECK(runtime.GetNumberOfValues() == 5);
    CHECK(runtime.GetComponentsArray().GetReadPointer() == q.values.data());
    auto as3 = vc::ArrayHandleBasic<viskores::Vec2f>{};
    runtime.AsArrayHandleBasic(as3);
    CHECK(as3.ReadPortal().Get(4) == viskores::Vec2f(8, 9));
  }
  CHECK(q.releases == 1);
}

TEST_CASE("VSK-1 one tensor per component adopts as an ArrayHandleSOA") {
  Producer<float> x(5, 0.0f), y(5, 10.0f), z(5, 20.0f);
  {
    auto soa = vsk::AdoptSOA<float, 3>({x.Make({5}), y.Make({5}), z.Make({5})});
    CHECK(soa.GetNumberOfValues() == 5);
    CHECK(soa.ReadPortal().Get(2) == viskores::Vec3f(2, 12, 22));
    CHECK(soa.GetArray(1).GetReadPointer() == y.values.data());
    Double(soa);
    CHECK(z.values[4] == doctest::Approx(48.0f));
    CHECK(x.releases + y.releases + z.releases == 0);
  }
  CHECK(x.releases == 1);
  CHECK(y.releases == 1);
  CHECK(z.releases == 1);
}

TEST_CASE("VSK-3 an adopted buffer cannot grow: Viskores refuses at access, the memory untouched") {
  Producer<float> p(4, 1.0f);
  {
    auto handle = vsk::Adopt<float>(p.Make({4}));
    handle.Allocate(1000);  // Viskores allocates lazily: the refusal comes at the next access
    CHECK_THROWS_AS(handle.WritePortal(), vc::ErrorBadAllocation);
    CHECK(p.values == std::vector<float>{1, 2, 3, 4});
  }
  CHECK(p.releases == 1);
}

TEST_CASE("VSK-5 refusals name what is wrong and leave the hold with the caller") {
  Producer<float> p(12);
  Tensor t = p.Make({12});
  CHECK(CodeOf([&] { (void)vsk::Adopt<double>(std::move(t)); }) == ErrorCode::kInvalidDtype);
  CHECK(CodeOf([&] { (void)vsk::AdoptVec<float, 3>(std::move(t)); }) == ErrorCode::kInvalidShape);
  Tensor rows = p.Make({4, 3});
  CHECK(CodeOf([&] { (void)vsk::AdoptVec<float, 2>(std::move(rows)); }) ==
        ErrorCode::kInvalidShape);
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(rows)); }) == ErrorCode::kInvalidShape);
  CHECK(CodeOf([&] { (void)vsk::AdoptRuntimeVec<float>(std::move(t)); }) ==
        ErrorCode::kInvalidShape);

  Tensor strided = p.Make({6});
  strided.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {6}, {2});
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(strided)); }) == ErrorCode::kInvalidStrides);

  Tensor read_only = p.Make({12});
  read_only.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(read_only)); }) == ErrorCode::kReadOnly);

  Tensor misaligned = p.Make({11});
  misaligned.layout.SetByteOffset(2);
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(misaligned)); }) ==
        ErrorCode::kInvalidArgument);

  Tensor outside = p.Make({13});  // one value past the described bytes (EXP-9's rule)
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(outside)); }) == ErrorCode::kOutOfBounds);

  // Every tensor above still holds the producer: nothing was released.
  CHECK(p.releases == 0);
  CHECK(t.descriptor.HasOwnership());
  CHECK(rows.descriptor.HasOwnership());
  CHECK(read_only.descriptor.HasOwnership());
  t = Tensor{};
  rows = Tensor{};
  strided = Tensor{};
  read_only = Tensor{};
  misaligned = Tensor{};
  outside = Tensor{};
  CHECK(p.releases == 6);
}

TEST_CASE(
    "VSK-2 memory without a Viskores adapter in this build is refused before the hold moves") {
  Producer<float> p(4);
  for (const DLDevice device : {DLDevice{kDLOneAPI, 0}, DLDevice{kDLCUDA, 0}, DLDevice{kDLROCM, 0},
                                DLDevice{kDLVulkan, 0}}) {
    CAPTURE(device.device_type);
    Tensor t = p.Make({4});
    t.device = device;
    if (device.device_type == kDLOneAPI) {
      t.descriptor.SetMemorySpace("level_zero");
    } else if (device.device_type == kDLCUDA) {
      t.descriptor.SetMemorySpace("cuda");
    } else if (device.device_type == kDLROCM) {
      t.descriptor.SetMemorySpace("hip");
    }
    const ErrorCode code = CodeOf([&] { (void)vsk::Adopt<float>(std::move(t)); });
    CHECK(code == ErrorCode::kUnsupportedDevice);
    CHECK(t.descriptor.HasOwnership());
  }
  CHECK(p.releases == 4);  // each tensor dropped its hold at the end of its iteration
}

TEST_CASE("VSK-4 pinned host memory is host memory, and a pending stream on it is refused") {
  Producer<float> p(4);
  {
    Tensor pinned = p.Make({4});
    pinned.device = {kDLCUDAHost, 0};
    auto handle = vsk::Adopt<float>(std::move(pinned));
    CHECK(handle.ReadPortal().Get(3) == doctest::Approx(3.0f));
  }
  CHECK(p.releases == 1);
  Tensor pending = p.Make({4});
  pending.device = {kDLCUDAHost, 0};
  pending.stream = 7;
  CHECK(CodeOf([&] { (void)vsk::Adopt<float>(std::move(pending)); }) ==
        ErrorCode::kInvalidArgument);
  CHECK(pending.descriptor.HasOwnership());
}

TEST_CASE("VSK-1 an SOA refusal of one component leaves every component's hold") {
  Producer<float> x(5), y(4), z(5);
  std::array<Tensor, 3> parts{x.Make({5}), y.Make({4}), z.Make({5})};
  CHECK(CodeOf([&] { (void)vsk::AdoptSOA<float, 3>(std::move(parts)); }) ==
        ErrorCode::kInvalidShape);
  for (const Tensor& part : parts) CHECK(part.descriptor.HasOwnership());
  CHECK(x.releases + y.releases + z.releases == 0);
}

TEST_CASE("VSK-1 an unowned tensor adopts: nothing to release, the caller keeps the memory alive") {
  std::vector<int16_t> values{1, 2, 3};
  Tensor t;
  t.descriptor.Set(values.data(), 6);
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<int16_t>(), {3});
  auto handle = vsk::Adopt<int16_t>(std::move(t));
  CHECK(vc::Algorithm::Reduce(handle, int16_t(0)) == 6);
}

TEST_CASE("VSK-6 an ArrayHandle exports as a tensor held by a copy of the handle") {
  std::vector<float> source{1, 2, 3, 4, 5, 6};
  Tensor exported;
  const float* where = nullptr;
  {
    vc::ArrayHandle<float> handle = vc::make_ArrayHandle(source, viskores::CopyFlag::On);
    where = vc::ArrayHandleBasic<float>(handle).GetReadPointer();
    exported = vsk::ToTensor(handle);
  }  // the handle is gone; the tensor's copy of it keeps the buffer
  CHECK(exported.descriptor.GetPointer() == reinterpret_cast<intptr_t>(where));
  CHECK(exported.layout.Ndim() == 1);
  CHECK(exported.layout.Shape()[0] == 6);
  CHECK((exported.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(exported.device.device_type == kDLCPU);
  CHECK(std::string(exported.descriptor.GetRole()) == "data");
  CHECK(exported.Data<const float>()[5] == doctest::Approx(6.0f));

  // Through DLPack and back: the import sees the same memory, read-only.
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(exported));
  Tensor back = dlbridge::FromDLPack(managed);
  CHECK(back.Data<const float>() == where);
  CHECK((back.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
}

TEST_CASE("VSK-6 Vec, runtime-Vec and SOA handles export with their components") {
  vc::ArrayHandle<viskores::Vec3f> vecs;
  vecs.Allocate(4);
  {
    auto portal = vecs.WritePortal();
    for (viskores::Id i = 0; i < 4; ++i) portal.Set(i, viskores::Vec3f(i, i + 0.5f, -1.0f * i));
  }
  Tensor t = vsk::ToTensor(vecs, vsk::Access::kWrite);
  CHECK(t.layout.Ndim() == 2);
  CHECK(t.layout.Shape()[0] == 4);
  CHECK(t.layout.Shape()[1] == 3);
  CHECK((t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0);
  float* data = t.Data<float>();
  CHECK(data[3 * 2 + 1] == doctest::Approx(2.5f));
  data[0] = 42.0f;  // write access: the handle sees it
  CHECK(vecs.ReadPortal().Get(0)[0] == doctest::Approx(42.0f));

  vc::ArrayHandleRuntimeVec<double> runtime(5);
  runtime.Allocate(2);
  Tensor r = vsk::ToTensor(runtime);
  CHECK(r.layout.Shape()[0] == 2);
  CHECK(r.layout.Shape()[1] == 5);

  auto soa = vc::make_ArrayHandleSOA<viskores::Vec2f>({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  std::vector<Tensor> parts = vsk::ToTensors(soa);
  REQUIRE(parts.size() == 2);
  CHECK(std::string(parts[1].descriptor.GetRole()) == "component_1");
  CHECK(parts[1].layout.Shape()[0] == 3);
  CHECK(parts[1].Data<const float>()[2] == doctest::Approx(6.0f));
}

TEST_CASE("VSK-6 an export to a device this build has no adapter for is refused") {
  vc::ArrayHandle<float> handle;
  handle.Allocate(3);
  CHECK(CodeOf([&] {
          (void)vsk::ToTensor(handle, vsk::Access::kRead, {kDLOneAPI, 0});
        }) == ErrorCode::kUnsupportedDevice);
}

TEST_CASE("VSK-1 a round trip: adopt, export, adopt the export again") {
  Producer<float> p(6, 1.0f);
  {
    auto first = vsk::Adopt<float>(p.Make({6}));
    Tensor out = vsk::ToTensor(first, vsk::Access::kWrite);
    auto second = vsk::Adopt<float>(std::move(out));  // the export's hold is a handle copy
    first = vc::ArrayHandleBasic<float>{};
    CHECK(p.releases == 0);
    CHECK(vc::Algorithm::Reduce(second, 0.0f) == doctest::Approx(21.0f));
  }
  CHECK(p.releases == 1);
}

TEST_CASE("VSK-2 AdoptableDeviceTypes lists what Adopt takes here") {
  const std::vector<int32_t> types = vsk::AdoptableDeviceTypes();
  auto has = [&](int32_t type) {
    return std::find(types.begin(), types.end(), type) != types.end();
  };
  CHECK(has(kDLCPU));
  CHECK(has(kDLCUDAHost));
  CHECK(has(kDLROCMHost));
  CHECK_FALSE(has(kDLOneAPI));
  CHECK_FALSE(has(kDLMetal));
  // A GPU type is listed exactly when Adopt takes its memory (here: never without a GPU).
  for (const int32_t type : {kDLCUDA, kDLROCM}) {
    std::vector<float> values(2);
    Tensor t;
    t.descriptor.Set(values.data(), 8, type == kDLCUDA ? "cuda" : "hip");
    t.device = {static_cast<DLDeviceType>(type), 0};
    t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<float>(), {2});
    bool adopted = true;
    try {
      (void)vsk::Adopt<float>(std::move(t));
    } catch (const dlbridge::Error&) {
      adopted = false;
    }
    CHECK(adopted == has(type));
  }
}

TEST_CASE("VSK-6 an export keeps the host memory when the handle's resources are released") {
  // Memory Viskores allocated itself: releasing the array's resources frees it unless the
  // export holds the allocation (valgrind and ASan see the read after a free otherwise).
  Tensor out;
  {
    vc::ArrayHandle<float> handle;
    handle.Allocate(4);
    auto portal = handle.WritePortal();
    for (viskores::Id i = 0; i < 4; ++i) portal.Set(i, static_cast<float>(i + 1));
    out = vsk::ToTensor(handle);
    handle.ReleaseResources();
  }
  const float* values = out.Data<const float>();
  CHECK(values[0] == doctest::Approx(1.0f));
  CHECK(values[3] == doctest::Approx(4.0f));

  // Memory adopted from a producer: its hold drops once, after the export's.
  Producer<float> p(4, 1.0f);
  {
    auto handle = vsk::Adopt<float>(p.Make({4}));
    out = vsk::ToTensor(handle);
    handle.ReleaseResources();
  }
  CHECK(p.releases == 0);
  CHECK(out.Data<const float>()[3] == doctest::Approx(4.0f));
  out = Tensor{};
  CHECK(p.releases == 1);
}

TEST_CASE("VSK-6 SOA components of different lengths are refused, not read past their end") {
  auto soa = vc::make_ArrayHandleSOA<viskores::Vec2f>({{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
  soa.SetArray(1, vc::make_ArrayHandle<float>({7.0f}));
  CHECK(CodeOf([&] { (void)vsk::ToTensors(soa); }) == ErrorCode::kInvalidShape);
}

TEST_CASE("VSK-4 stream -1 orders nothing and is no pending work") {
  Producer<float> p(4);
  Tensor t = p.Make({4});
  t.device = {kDLCUDAHost, 0};
  t.stream = -1;
  auto handle = vsk::Adopt<float>(std::move(t));
  CHECK(handle.GetNumberOfValues() == 4);
}
