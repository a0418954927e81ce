// The Kokkos bridge (spec/bridges.md, KOK-*): Views to tensors and back, written and read by
// Kokkos kernels on the default host execution space (Debian's Kokkos: OpenMP), the hold
// counted through the allocation's use_count, and the memory-space table on every row.
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "counting.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/kokkos.h"

using dlbridge::ErrorCode;
using dlbridge::Tensor;
namespace kk = dlbridge::kokkos;
using Exec = Kokkos::DefaultHostExecutionSpace;

namespace {

std::vector<int64_t> Shape(const Tensor& t) {
  return {t.layout.Shape().begin(), t.layout.Shape().end()};
}
std::vector<int64_t> Strides(const Tensor& t) {
  return {t.layout.Strides().begin(), t.layout.Strides().end()};
}

// v(i, j) = 10 i + j, written by a Kokkos kernel.
template <class V>
void Number(const V& v) {
  Kokkos::parallel_for(
      "number", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {v.extent(0), v.extent(1)}),
      KOKKOS_LAMBDA(std::size_t i, std::size_t j) { v(i, j) = static_cast<double>(10 * i + j); });
  Kokkos::fence();
}

// The sum of every element, read by a Kokkos kernel.
template <class V>
double Sum(const V& v) {
  double total = 0;
  Kokkos::parallel_reduce(
      "sum", Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>({0, 0}, {v.extent(0), v.extent(1)}),
      KOKKOS_LAMBDA(std::size_t i, std::size_t j, double& acc) { acc += v(i, j); }, total);
  return total;
}

// A stand-in memory space type: all the table reads of a space is its name().
template <char... C>
struct FakeSpace {
  static constexpr char kName[] = {C..., '\0'};
  static constexpr const char* name() { return kName; }
};

}  // namespace

TEST_CASE("KOK-1 a View exports its extents, strides and memory space, zero copy") {
  SUBCASE("LayoutRight, read back through DLPack") {
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> v("v", 3, 4);
    Number(v);
    Tensor t = kk::ToTensor(v);
    CHECK(Shape(t) == std::vector<int64_t>{3, 4});
    CHECK(Strides(t) == std::vector<int64_t>{4, 1});
    CHECK(t.Data<double>() == v.data());
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.device.device_id == 0);
    CHECK(t.flags == 0);
    Tensor back = dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(std::move(t)));
    CHECK(back.Data<double>()[2 * 4 + 3] == 23.0);
  }
  SUBCASE("LayoutLeft and a strided subview") {
    Kokkos::View<double**, Kokkos::LayoutLeft> v("v", 3, 4);
    CHECK(Strides(kk::ToTensor(v)) == std::vector<int64_t>{1, 3});
    auto sub = Kokkos::subview(v, Kokkos::make_pair(1, 3), Kokkos::make_pair(0, 4));
    Kokkos::View<double**, Kokkos::LayoutStride> strided = sub;
    auto check = [&](const Tensor& t) {
      CHECK(Shape(t) == std::vector<int64_t>{2, 4});
      CHECK(Strides(t) == std::vector<int64_t>{1, 3});
      CHECK(t.Data<double>() == &v(1, 0));
      CHECK(t.descriptor.GetSizeInBytes() == (1 + 3 * 3 + 1) * 8);
    };
    check(kk::ToTensor(sub));
    check(kk::ToTensor(strided));
  }
  SUBCASE("a View of const elements exports read-only, static extents too") {
    Kokkos::View<float* [3]> v("v", 5);
    Kokkos::View<const float* [3]> ro = v;
    Tensor t = kk::ToTensor(ro);
    CHECK(Shape(t) == std::vector<int64_t>{5, 3});
    CHECK((t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  }
}

TEST_CASE("KOK-2 the View's allocation lives until the last consumer lets go") {
  Kokkos::View<double**> watch("watch", 2, 2);
  CHECK(watch.use_count() == 1);
  {
    Kokkos::View<double**> v = watch;
    Tensor t = kk::ToTensor(v);
    CHECK(watch.use_count() == 3);  // watch, v and the tensor's hold
    v = Kokkos::View<double**>();
    DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(t));
    CHECK(watch.use_count() == 2);  // the hold moved into the export
    managed->deleter(managed);
    CHECK(watch.use_count() == 1);  // the deleter dropped it, once
  }
  // An unmanaged View owns nothing: its tensor has no hold unless one is given.
  std::vector<double> memory(6);
  kk::UnmanagedView<double**> borrowed(memory.data(), 2, 3);
  Tensor unowned = kk::ToTensor(borrowed);
  CHECK_FALSE(unowned.descriptor.HasOwnership());
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(unowned)), ErrorCode::kNoHold, "");
  auto owner = std::make_shared<int>(1);
  Tensor owned = kk::ToTensor(borrowed, owner);
  CHECK(owner.use_count() == 2);
  owned = Tensor();
  CHECK(owner.use_count() == 1);
}

TEST_CASE("KOK-3 every Kokkos memory space maps to its DLPack device type") {
  // The decisions of spec/bridges.md, written down independently of the table.
  struct Expected {
    const char* name;
    int32_t type;
    bool imports;
  };
  const Expected expected[] = {
      {"Host", kDLCPU, true},
      {"Cuda", kDLCUDA, true},
      {"CudaUVM", kDLCUDAManaged, true},
      {"CudaHostPinned", kDLCUDAHost, true},
      {"HIP", kDLROCM, true},
      {"HIPHostPinned", kDLROCMHost, true},
      {"HIPManaged", kDLROCM, false},
      {"SYCLDeviceUSM", kDLOneAPI, true},
      {"SYCLSharedUSM", kDLOneAPI, false},
      {"SYCLHostUSM", kDLOneAPI, false},
  };
  CHECK(std::size(kk::kSpaceTable) == std::size(expected));
  for (const Expected& e : expected) {
    CAPTURE(e.name);
    const kk::SpaceRow* row = kk::FindSpace(e.name);
    REQUIRE(row != nullptr);
    CHECK(row->device_type == e.type);
    CHECK(row->imports == e.imports);
  }
  CHECK(kk::FindSpace("OpenACCSpace") == nullptr);
  CHECK(kk::FindSpace("ScratchMemorySpace") == nullptr);
  // The spaces this Kokkos declares, by their own types.
  CHECK(kk::DeviceOf<Kokkos::HostSpace>().device_type == kDLCPU);
  CHECK(kk::DeviceOf<Kokkos::SharedHostPinnedSpace>().device_type ==
        kk::FindSpace(Kokkos::SharedHostPinnedSpace::name())->device_type);
#ifdef KOKKOS_ENABLE_CUDA
  CHECK(kk::DeviceOf<Kokkos::CudaSpace>().device_type == kDLCUDA);
  CHECK(kk::DeviceOf<Kokkos::CudaUVMSpace>().device_type == kDLCUDAManaged);
  CHECK(kk::DeviceOf<Kokkos::CudaHostPinnedSpace>().device_type == kDLCUDAHost);
#endif
#ifdef KOKKOS_ENABLE_HIP
  CHECK(kk::DeviceOf<Kokkos::HIPSpace>().device_type == kDLROCM);
  CHECK(kk::DeviceOf<Kokkos::HIPHostPinnedSpace>().device_type == kDLROCMHost);
  CHECK(kk::DeviceOf<Kokkos::HIPManagedSpace>().device_type == kDLROCM);
#endif
  // Device ids: 0 for CPU-like types, -1 (read from the pointer at export) for GPU ones.
  CHECK(kk::DeviceOf<FakeSpace<'C', 'u', 'd', 'a'>>().device_id == -1);
  CHECK(kk::DeviceOf<FakeSpace<'C', 'u', 'd', 'a', 'U', 'V', 'M'>>().device_type == kDLCUDAManaged);
  CHECK(kk::DeviceOf<FakeSpace<'H', 'I', 'P', 'H', 'o', 's', 't', 'P', 'i', 'n', 'n', 'e', 'd'>>()
            .device_id == 0);
}

TEST_CASE("KOK-4 a tensor becomes a View only in the memory space of its device") {
  std::vector<float> data(12, 1.0f);
  auto host = [&](DLDevice device, const char* space) {
    Tensor t;
    t.descriptor.Set(data.data(), 48, space);
    t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, {3, 4});
    t.device = device;
    return t;
  };
  // The host space takes every host-readable device type, pinned memory included.
  CHECK(kk::View<float**>(host(DLDevice{kDLCPU, 0}, "host")).data() == data.data());
  CHECK(kk::View<float**>(host(DLDevice{kDLCUDAHost, 0}, "host")).extent(1) == 4);
  CHECK_DLB_ERROR(kk::View<float**>(host(DLDevice{kDLCUDA, 0}, "cuda")),
                  ErrorCode::kUnsupportedDevice,
                  "View: the tensor's device type is kDLCUDA (memory space \"cuda\") but the "
                  "View's memory space is Host, which takes kDLCPU, kDLCUDAHost, kDLROCMHost");
  // A CPU device type on GPU memory is not host memory: the host space reads the memory space
  // too (the host rule, see HLP-4), not only the device type.
  CHECK_DLB_ERROR(kk::View<float**>(host(DLDevice{kDLCPU, 0}, "cuda")),
                  ErrorCode::kUnsupportedDevice,
                  "dlbridge::mdspan::View: memory space \"cuda\" (device type kDLCPU) is not "
                  "host-readable");
  // A device space takes its own type only (checked through the stand-in types: this Kokkos
  // may have no GPU backend).
  using FakeCuda = FakeSpace<'C', 'u', 'd', 'a'>;
  using FakeUvm = FakeSpace<'C', 'u', 'd', 'a', 'U', 'V', 'M'>;
  using FakeHipManaged = FakeSpace<'H', 'I', 'P', 'M', 'a', 'n', 'a', 'g', 'e', 'd'>;
  CHECK_NOTHROW(kk::CheckImportDevice<FakeCuda>(host(DLDevice{kDLCUDA, 0}, "cuda")));
  CHECK_DLB_ERROR(kk::CheckImportDevice<FakeCuda>(host(DLDevice{kDLCPU, 0}, "host")),
                  ErrorCode::kUnsupportedDevice, "which takes kDLCUDA");
  CHECK_DLB_ERROR(kk::CheckImportDevice<FakeUvm>(host(DLDevice{kDLCUDA, 0}, "cuda")),
                  ErrorCode::kUnsupportedDevice, "which takes kDLCUDAManaged");
  CHECK_DLB_ERROR(kk::CheckImportDevice<FakeHipManaged>(host(DLDevice{kDLROCM, 0}, "hip")),
                  ErrorCode::kUnsupportedDevice,
                  "which takes none: no DLPack device type says memory is HIPManaged");
}

TEST_CASE("KOK-5 View gives an unmanaged View of the checked type, rank and layout") {
  Kokkos::View<double**, Kokkos::LayoutLeft> source("source", 3, 4);
  Number(source);
  Tensor t = dlbridge::FromDLPack(dlbridge::ToDLPackVersioned(kk::ToTensor(source)));
  SUBCASE("LayoutLeft: the same elements, written through") {
    auto v = kk::View<double**, Kokkos::LayoutLeft>(t);
    static_assert(decltype(v)::traits::memory_traits::is_unmanaged);
    CHECK(v.use_count() == 0);
    CHECK(v.data() == source.data());
    CHECK(Sum(v) == Sum(source));
    v(2, 3) = -1.0;
    CHECK(source(2, 3) == -1.0);
  }
  SUBCASE("LayoutStride takes any non-overlapping strides") {
    auto v = kk::View<const double**, Kokkos::LayoutStride>(t);
    CHECK(v.stride(0) == 1);
    CHECK(v.stride(1) == 3);
    CHECK(v(1, 2) == 12.0);
  }
  SUBCASE("what does not fit is named (the mdspan bridge's checks)") {
    CHECK_DLB_ERROR((kk::View<double**>(t)), ErrorCode::kInvalidStrides,
                    "the mdspan's layout needs strides [4, 1]");
    CHECK_DLB_ERROR((kk::View<double***, Kokkos::LayoutLeft>(t)), ErrorCode::kInvalidShape,
                    "the mdspan takes ndim 3");
    CHECK_DLB_ERROR((kk::View<float**, Kokkos::LayoutLeft>(t)), ErrorCode::kInvalidDtype,
                    "the tensor's dtype is float64 but the mdspan reads float32");
    CHECK_DLB_ERROR((kk::View<double* [5], Kokkos::LayoutLeft>(t)), ErrorCode::kInvalidShape,
                    "static extent 1 is 5");
    Tensor ro = kk::ToTensor(Kokkos::View<const double**, Kokkos::LayoutLeft>(source));
    CHECK_DLB_ERROR((kk::View<double**, Kokkos::LayoutLeft>(ro)), ErrorCode::kReadOnly,
                    "name an mdspan of const elements");
    CHECK(kk::View<const double**, Kokkos::LayoutLeft>(ro)(0, 1) == 1.0);
  }
}
