// The mdspan bridge (spec/bridges.md, MDS-*): every case runs for each mdspan family this
// compiler has (std::mdspan, Kokkos' reference mdspan), through the one template.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#ifdef DLBRIDGE_TEST_STD_MDSPAN
#include <mdspan>
#endif
#ifdef DLBRIDGE_TEST_KOKKOS_MDSPAN
#include <mdspan/mdspan.hpp>
#endif

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/mdspan.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
namespace mds = dlbridge::mdspan;

// One family's names, so that each case is written once for all of them.
#ifdef DLBRIDGE_TEST_STD_MDSPAN
struct StdMdspan {
  template <class T, class E, class L = std::layout_right>
  using mdspan = std::mdspan<T, E, L>;
  template <class I, std::size_t... N>
  using extents = std::extents<I, N...>;
  template <class I, std::size_t R>
  using dextents = std::dextents<I, R>;
  using right = std::layout_right;
  using left = std::layout_left;
  using stride = std::layout_stride;
  static constexpr std::size_t dyn = std::dynamic_extent;
};
TYPE_TO_STRING(StdMdspan);
#endif
#ifdef DLBRIDGE_TEST_KOKKOS_MDSPAN
struct KokkosMdspan {
  template <class T, class E, class L = Kokkos::layout_right>
  using mdspan = Kokkos::mdspan<T, E, L>;
  template <class I, std::size_t... N>
  using extents = Kokkos::extents<I, N...>;
  template <class I, std::size_t R>
  using dextents = Kokkos::dextents<I, R>;
  using right = Kokkos::layout_right;
  using left = Kokkos::layout_left;
  using stride = Kokkos::layout_stride;
  static constexpr std::size_t dyn = Kokkos::dynamic_extent;
};
TYPE_TO_STRING(KokkosMdspan);
#endif
// The families this compiler has; each case is applied to every one.
#if defined(DLBRIDGE_TEST_STD_MDSPAN) && defined(DLBRIDGE_TEST_KOKKOS_MDSPAN)
#define DLB_FAMILIES StdMdspan, KokkosMdspan
#elif defined(DLBRIDGE_TEST_STD_MDSPAN)
#define DLB_FAMILIES StdMdspan
#else
#define DLB_FAMILIES KokkosMdspan
#endif

namespace {

std::vector<int64_t> Shape(const Tensor& t) {
  return {t.layout.Shape().begin(), t.layout.Shape().end()};
}
std::vector<int64_t> Strides(const Tensor& t) {
  return {t.layout.Strides().begin(), t.layout.Strides().end()};
}

// Through DLPack and back, so that the view sees what a consumer sees. The tests' buffers
// outlive every consumer: the tensors are exported without a hold.
Tensor RoundTrip(Tensor t) {
  dlbridge::ExportOptions borrowed;
  borrowed.allow_unowned = true;
  return dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(t), borrowed));
}

// A host tensor over `values` (borrowed: no hold) with the given layout.
template <class T>
Tensor HostTensor(std::vector<T>& values, std::vector<int64_t> shape,
                  std::vector<int64_t> strides = {}, uint64_t byteOffset = 0) {
  Tensor t;
  t.descriptor.Set(values.data(), static_cast<int64_t>(values.size() * sizeof(T)));
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<T>(), std::move(shape), std::move(strides),
                                    byteOffset);
  return t;
}

// Element (i...) of an mdspan, through its mapping: the same call in every family and
// standard (C++23's m[i, j] is a comma expression in C++17).
template <class M, class... I>
auto At(const M& m, I... i) {
  return m.data_handle()[m.mapping()(static_cast<typename M::index_type>(i)...)];
}

std::vector<float> Iota(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

}  // namespace

TEST_CASE_TEMPLATE("MDS-1 ToTensor describes every strided layout zero copy", F, DLB_FAMILIES) {
  using D2 = typename F::template dextents<std::size_t, 2>;
  std::vector<float> data = Iota(24);
  SUBCASE("layout_right, dynamic extents") {
    typename F::template mdspan<float, D2> m(data.data(), 3, 4);
    Tensor t = mds::ToTensor(m, nullptr);
    CHECK(Shape(t) == std::vector<int64_t>{3, 4});
    CHECK(Strides(t) == std::vector<int64_t>{4, 1});
    CHECK(t.descriptor.GetSizeInBytes() == 48);
    CHECK(t.Data<float>() == data.data());
    CHECK(t.layout.ByteOffset() == 0);
    CHECK(dlbridge::SameDataType(t.layout.Dtype(), DLDataType{kDLFloat, 32, 1}));
    CHECK(t.device.device_type == kDLCPU);
    CHECK(std::string(t.descriptor.GetMemorySpace()) == "host");
    CHECK(t.flags == 0);
  }
  SUBCASE("layout_left") {
    typename F::template mdspan<float, D2, typename F::left> m(data.data(), 3, 4);
    Tensor t = mds::ToTensor(m, nullptr);
    CHECK(Strides(t) == std::vector<int64_t>{1, 3});
    CHECK(t.descriptor.GetSizeInBytes() == 48);
  }
  SUBCASE("layout_stride: every other column of a 4 x 6 block") {
    using M = typename F::template mdspan<float, D2, typename F::stride>;
    typename M::mapping_type map(D2(3, 3), std::array<std::size_t, 2>{6, 2});
    M m(data.data() + 1, map);
    Tensor t = mds::ToTensor(m, nullptr);
    CHECK(Shape(t) == std::vector<int64_t>{3, 3});
    CHECK(Strides(t) == std::vector<int64_t>{6, 2});
    CHECK(t.descriptor.GetSizeInBytes() == (2 * 6 + 2 * 2 + 1) * 4);  // required_span_size
    // A consumer reads the same elements through DLPack.
    Tensor back = RoundTrip(mds::ToTensor(m, nullptr));
    const float* zero = back.Data<float>();
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) CHECK(zero[i * 6 + j * 2] == At(m, i, j));
  }
  SUBCASE("static extents and an int index type") {
    typename F::template mdspan<const float, typename F::template extents<int, 2, 3>> m(
        data.data());
    Tensor t = mds::ToTensor(m, nullptr);
    CHECK(Shape(t) == std::vector<int64_t>{2, 3});
    CHECK(Strides(t) == std::vector<int64_t>{3, 1});
  }
  SUBCASE("rank 0 and zero extents") {
    typename F::template mdspan<float, typename F::template extents<std::size_t>> scalar(
        data.data() + 5);
    Tensor t = mds::ToTensor(scalar, nullptr);
    CHECK(t.layout.Ndim() == 0);
    CHECK(t.descriptor.GetSizeInBytes() == 4);
    typename F::template mdspan<float, D2> empty(data.data(), 0, 4);
    CHECK(mds::ToTensor(empty, nullptr).descriptor.GetSizeInBytes() == 0);
  }
  SUBCASE("the device given names the memory space") {
    typename F::template mdspan<float, D2> m(data.data(), 3, 4);
    Tensor pinned = mds::ToTensor(m, nullptr, DLDevice{kDLCUDAHost, 0});
    CHECK(std::string(pinned.descriptor.GetMemorySpace()) == "host");
    CHECK(pinned.device.device_type == kDLCUDAHost);
    Tensor gpu = mds::ToTensor(m, nullptr, DLDevice{kDLCUDAManaged, 0});
    CHECK(std::string(gpu.descriptor.GetMemorySpace()) == "cuda");
    CHECK_DLB_ERROR(mds::ToTensor(m, nullptr, DLDevice{kDLOpenCL, 0}),
                    ErrorCode::kUnsupportedDevice, "has no memory space that exports it");
  }
}

TEST_CASE_TEMPLATE("MDS-2 the owner given is the hold, until the last consumer lets go", F,
                   DLB_FAMILIES) {
  using D1 = typename F::template dextents<std::size_t, 1>;
  auto storage = std::make_shared<std::vector<double>>(8, 1.5);
  std::weak_ptr<std::vector<double>> watch = storage;
  typename F::template mdspan<double, D1> m(storage->data(), 8);
  Tensor t = mds::ToTensor(m, storage);
  storage.reset();
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(t));
  CHECK_FALSE(watch.expired());  // the export holds it now
  CHECK(static_cast<double*>(managed->dl_tensor.data)[7] == 1.5);
  managed->deleter(managed);
  CHECK(watch.expired());  // the deleter dropped the last reference, once

  std::vector<double> local(4);
  typename F::template mdspan<double, D1> borrowed(local.data(), 4);
  Tensor unowned = mds::ToTensor(borrowed, nullptr);
  CHECK_FALSE(unowned.descriptor.HasOwnership());
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(unowned)), ErrorCode::kNoHold, "");
  dlbridge::ExportOptions opt;
  opt.allow_unowned = true;
  DLManagedTensorVersioned* caller_kept =
      dlbridge::ToDLPackVersioned(mds::ToTensor(borrowed, nullptr), opt);
  caller_kept->deleter(caller_kept);
}

TEST_CASE_TEMPLATE("MDS-3 const elements export read-only and only const views read them", F,
                   DLB_FAMILIES) {
  using D2 = typename F::template dextents<std::size_t, 2>;
  std::vector<float> data = Iota(6);
  typename F::template mdspan<const float, D2> ro(data.data(), 2, 3);
  Tensor t = mds::ToTensor(ro, nullptr);
  CHECK((t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  using Mutable = typename F::template mdspan<float, D2>;
  using Const = typename F::template mdspan<const float, D2>;
  CHECK_DLB_ERROR(mds::View<Mutable>(t), ErrorCode::kReadOnly, "name an mdspan of const elements");
  Const view = mds::View<Const>(t);
  CHECK(At(view, 1, 2) == 5.0f);
}

TEST_CASE_TEMPLATE("MDS-5 View checks the rank, then the dtype", F, DLB_FAMILIES) {
  std::vector<float> data = Iota(12);
  Tensor t = HostTensor(data, {3, 4});
  using R3 = typename F::template mdspan<float, typename F::template dextents<std::size_t, 3>>;
  CHECK_DLB_ERROR(mds::View<R3>(t), ErrorCode::kInvalidShape,
                  "View: the tensor has ndim 2 (shape [3, 4], strides [4, 1]); the mdspan takes "
                  "ndim 3");
  using Doubles = typename F::template mdspan<double, typename F::template dextents<int, 2>>;
  CHECK_DLB_ERROR(mds::View<Doubles>(t), ErrorCode::kInvalidDtype,
                  "the tensor's dtype is float32 but the mdspan reads float64");
  using Floats = typename F::template mdspan<float, typename F::template dextents<int, 2>>;
  Floats m = mds::View<Floats>(RoundTrip(HostTensor(data, {3, 4})));
  CHECK(m.data_handle() == data.data());
  CHECK(At(m, 2, 3) == 11.0f);
}

TEST_CASE_TEMPLATE("MDS-6 static extents must equal the shape and every size fit index_type", F,
                   DLB_FAMILIES) {
  std::vector<float> data = Iota(12);
  Tensor t = HostTensor(data, {3, 4});
  using Fixed = typename F::template mdspan<float, typename F::template extents<int, F::dyn, 4>>;
  Fixed ok = mds::View<Fixed>(t);
  CHECK(ok.extent(0) == 3);
  CHECK(ok.static_extent(1) == 4);
  using Wrong = typename F::template mdspan<float, typename F::template extents<int, 3, 5>>;
  CHECK_DLB_ERROR(mds::View<Wrong>(t), ErrorCode::kInvalidShape,
                  "shape[1] is 4 (shape [3, 4], strides [4, 1]) but the mdspan's static "
                  "extent 1 is 5");
  std::vector<uint8_t> bytes(40000);
  using Small = typename F::template mdspan<uint8_t, typename F::template dextents<int8_t, 1>>;
  CHECK_DLB_ERROR(mds::View<Small>(HostTensor(bytes, {200})), ErrorCode::kOverflow,
                  "shape[0] is 200, past the mdspan's index_type");
  using Short = typename F::template mdspan<uint8_t, typename F::template dextents<int16_t, 2>>;
  CHECK_DLB_ERROR(mds::View<Short>(HostTensor(bytes, {200, 200})), ErrorCode::kOverflow,
                  "the tensor has 40000 elements, past the mdspan's index_type");
}

TEST_CASE_TEMPLATE("MDS-7 the strides must be the layout's, extent-1 ones aside", F, DLB_FAMILIES) {
  using D2 = typename F::template dextents<std::size_t, 2>;
  using Right = typename F::template mdspan<float, D2>;
  using Left = typename F::template mdspan<float, D2, typename F::left>;
  using Strided = typename F::template mdspan<float, D2, typename F::stride>;
  std::vector<float> data = Iota(24);
  SUBCASE("layout_right and layout_left take their contiguous strides only") {
    CHECK_DLB_ERROR(mds::View<Right>(HostTensor(data, {3, 4}, {6, 1})), ErrorCode::kInvalidStrides,
                    "strides[0] is 6 (shape [3, 4], strides [6, 1]); the mdspan's layout "
                    "needs strides [4, 1]");
    CHECK_DLB_ERROR(mds::View<Left>(HostTensor(data, {3, 4})), ErrorCode::kInvalidStrides,
                    "needs strides [1, 3]");
    Left left = mds::View<Left>(HostTensor(data, {3, 4}, {1, 3}));
    CHECK(At(left, 2, 1) == 5.0f);
    // An extent-1 dimension's stride addresses nothing: any value is the layout's.
    Right row = mds::View<Right>(HostTensor(data, {1, 4}, {99, 1}));
    CHECK(At(row, 0, 3) == 3.0f);
    // A tensor without elements has no stride to check.
    CHECK(mds::View<Right>(HostTensor(data, {0, 4}, {1, 7})).extent(0) == 0);
  }
  SUBCASE("layout_stride takes positive strides that do not overlap") {
    Strided s = mds::View<Strided>(HostTensor(data, {3, 3}, {6, 2}, 4));
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j)
        CHECK(At(s, i, j) == static_cast<float>(1 + 6 * i + 2 * j));
    CHECK(s.stride(0) == 6);
    CHECK(s.stride(1) == 2);
    CHECK_DLB_ERROR(mds::View<Strided>(HostTensor(data, {3, 2}, {-6, 1}, 48)),
                    ErrorCode::kInvalidStrides, "layout_stride takes no negative strides");
    CHECK_DLB_ERROR(mds::View<Strided>(HostTensor(data, {3, 2}, {0, 1})),
                    ErrorCode::kInvalidStrides, "takes no zero strides (no broadcast dimensions)");
    CHECK_DLB_ERROR(mds::View<Strided>(HostTensor(data, {3, 3}, {1, 1})),
                    ErrorCode::kInvalidStrides, "needs dimensions that do not overlap");
    // Extent-1 and empty tensors: their free strides are given values the layout takes.
    Strided column = mds::View<Strided>(HostTensor(data, {4, 1}, {2, 0}));
    CHECK(column.mapping().is_unique());
    CHECK(At(column, 3, 0) == 6.0f);
    Strided none = mds::View<Strided>(HostTensor(data, {0, 5}, {0, 0}));
    CHECK(none.size() == 0);
  }
}

TEST_CASE_TEMPLATE("MDS-8 element zero must be aligned to the element type", F, DLB_FAMILIES) {
  using D1 = typename F::template dextents<std::size_t, 1>;
  std::vector<float> data = Iota(8);
  using M = typename F::template mdspan<float, D1>;
  Tensor t = HostTensor(data, {4}, {1}, 2);
  CHECK_DLB_ERROR(mds::View<M>(t), ErrorCode::kInvalidArgument,
                  "element zero (byte offset 2) is not aligned to 4 bytes");
}

TEST_CASE_TEMPLATE("MDS-9 View reads host memory unless the caller takes the device", F,
                   DLB_FAMILIES) {
  using M = typename F::template mdspan<float, typename F::template dextents<std::size_t, 1>>;
  Tensor t;  // a CUDA pointer: never dereferenced here
  t.descriptor.Set(int64_t{0x7f0000001000}, 64, "cuda");
  t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, {16});
  t.device = DLDevice{kDLCUDA, 0};
  CHECK_DLB_ERROR(mds::View<M>(t), ErrorCode::kUnsupportedDevice, "");
  mds::ViewOptions any;
  any.any_device = true;
  M m = mds::View<M>(t, any);
  CHECK(reinterpret_cast<intptr_t>(m.data_handle()) == 0x7f0000001000);
  CHECK(m.extent(0) == 16);
}
