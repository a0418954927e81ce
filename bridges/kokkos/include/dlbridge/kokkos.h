/// @file
/// The Kokkos bridge (spec/bridges.md, KOK-*): a Kokkos::View as a dlbridge::Tensor that
/// holds the View's allocation, and a Tensor as an unmanaged Kokkos::View of a checked type,
/// rank, layout and memory space. Built on the mdspan bridge (a View is an mdspan in Kokkos
/// 4.4+): its rules check extents, strides, dtype and alignment, this header adds the hold and
/// the memory spaces. Header-only; needs Kokkos 5 (target dlbridge::kokkos).
#pragma once

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlbridge/mdspan.h"
#include "dlbridge/owner.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::kokkos
/// The Kokkos bridge: ToTensor (Kokkos::View to dlbridge) and View (dlbridge to an unmanaged
/// Kokkos::View).
namespace dlbridge {
namespace kokkos {

/// One Kokkos memory space and its DLPack device type (spec/bridges.md, "Kokkos").
struct SpaceRow {
  const char* name;     ///< The space's `name()`, e.g. "CudaUVM" for Kokkos::CudaUVMSpace.
  int32_t device_type;  ///< The DLDeviceType its Views export as.
  /// Whether a tensor may be imported into the space: false where no DLPack device type says
  /// the memory is of that kind (HIP managed, SYCL shared and host USM).
  bool imports;
};

// KOK-3: the one mapping of Kokkos memory spaces to DLPack devices, keyed by the space's
// name() so that every row is testable in a build without that backend.
inline constexpr SpaceRow kSpaceTable[] = {
    {"Host", kDLCPU, true},
    {"Cuda", kDLCUDA, true},
    {"CudaUVM", kDLCUDAManaged, true},
    {"CudaHostPinned", kDLCUDAHost, true},
    {"HIP", kDLROCM, true},
    {"HIPHostPinned", kDLROCMHost, true},
    {"HIPManaged", kDLROCM, false},  // DLPack has no ROCm managed type: device memory to readers
    {"SYCLDeviceUSM", kDLOneAPI, true},
    {"SYCLSharedUSM", kDLOneAPI, false},  // kDLOneAPI does not say which USM kind it is
    {"SYCLHostUSM", kDLOneAPI, false},
};

/// The index in kSpaceTable of the space named `name` (a Kokkos memory space's `name()`), or
/// -1 when no DLPack device type describes it (OpenACCSpace, NextSiliconSharedSpace, scratch
/// memory). An index, not a pointer: sanitizer builds do not fold pointer comparisons.
constexpr int FindSpaceIndex(std::string_view name) noexcept {
  for (int i = 0; i < static_cast<int>(std::size(kSpaceTable)); ++i) {
    if (name == kSpaceTable[i].name) return i;
  }
  return -1;
}

/// The row of the space named `name`, or nullptr when the table has none (FindSpaceIndex).
constexpr const SpaceRow* FindSpace(std::string_view name) noexcept {
  const int i = FindSpaceIndex(name);
  return i < 0 ? nullptr : &kSpaceTable[i];
}

/// The row of the memory space `Space` (a Kokkos memory space type, or any type with a
/// constexpr static `name()`); a space no DLPack device type describes stops the build.
template <class Space>
constexpr const SpaceRow& SpaceRowOf() noexcept {
  static_assert(FindSpaceIndex(Space::name()) >= 0,
                "dlbridge::kokkos: this Kokkos memory space has no DLPack device type (see "
                "the table in spec/bridges.md); deep_copy the View into a mapped space first");
  return kSpaceTable[FindSpaceIndex(Space::name())];
}

/// The DLPack device of memory in `Space`: its table type, with device id 0 for the CPU-like
/// types and -1 ("read it from the pointer" at export, see GPU-2) for the GPU ones.
template <class Space>
DLDevice DeviceOf() {
  const auto type = static_cast<DLDeviceType>(SpaceRowOf<Space>().device_type);
  const DeviceTypeInfo* row = FindDeviceType(type);
  return DLDevice{type, row != nullptr && row->id_is_zero ? 0 : -1};
}

namespace detail {

inline constexpr kit::Site kView{"kokkos", "View"};

// Kokkos' array layouts as the mdspan layouts the mdspan bridge checks against.
template <class Layout>
struct MdspanLayout {
  static_assert(!std::is_same_v<Layout, Layout>,
                "dlbridge::kokkos::View: the layout is not one DLPack strides describe: use "
                "Kokkos::LayoutRight, Kokkos::LayoutLeft or Kokkos::LayoutStride");
};
template <>
struct MdspanLayout<Kokkos::LayoutRight> {
  using type = Kokkos::layout_right;
};
template <>
struct MdspanLayout<Kokkos::LayoutLeft> {
  using type = Kokkos::layout_left;
};
template <>
struct MdspanLayout<Kokkos::LayoutStride> {
  using type = Kokkos::layout_stride;
};

}  // namespace detail

/// Whether a tensor on `device` may become a View in `Space`; throws
/// Error(kUnsupportedDevice) naming the device type, the space and what it takes otherwise.
/// Device type 0 means the descriptor's space's default type.
// KOK-4: the tensor's device must be the space's (the host space takes any host-readable one).
template <class Space>
void CheckImportDevice(const Tensor& tensor) {
  const SpaceRow& space = SpaceRowOf<Space>();
  const int32_t type = tensor.device.device_type != 0
                           ? tensor.device.device_type
                           : DefaultDeviceType(tensor.descriptor.GetMemorySpaceKind());
  const DeviceTypeInfo* row = FindDeviceType(type);
  const bool host = space.device_type == kDLCPU && row != nullptr && row->host_addressable;
  if (space.imports && (type == space.device_type || host)) return;
  std::string wanted = space.imports
                           ? std::string(DeviceTypeName(space.device_type))
                           : std::string("none: no DLPack device type says memory is ") +
                                 space.name + "; import into the space of the tensor's device type";
  if (space.device_type == kDLCPU) {
    wanted = DeviceTypeNames([](const DeviceTypeInfo& r) { return r.host_addressable; });
  }
  detail::kView.Fail(ErrorCode::kUnsupportedDevice,
                     "the tensor's device type is " + std::string(DeviceTypeName(type)) +
                         " (memory space \"" + tensor.descriptor.GetMemorySpace() +
                         "\") but the View's memory space is " + space.name + ", which takes " +
                         wanted);
}

/// A tensor over `view`'s elements (zero copy) that holds `owner` — the shared_ptr that owns
/// the memory, or MakeOwner(...) of whatever does — until the last consumer lets go. Shape,
/// strides and the span are the View's mapping's (LayoutRight, padded or not, LayoutLeft,
/// LayoutStride; see MDS-1), dtype DataTypeOf<value_type>(), the device the table's for the
/// View's memory space (DeviceOf); a View of const elements exports read-only (see MDS-3).
/// A null `owner` leaves the tensor without a hold (export then needs
/// ExportOptions::allow_unowned, see EXP-3). Nothing is taken on failure.
// KOK-1: the View's own mapping and memory space, through the mdspan bridge.
template <class DataType, class... Properties>
Tensor ToTensor(const Kokkos::View<DataType, Properties...>& view,
                std::shared_ptr<const void> owner) {
  using ViewType = Kokkos::View<DataType, Properties...>;
  using Space = typename ViewType::memory_space;
  // The View's own mapping over a plain pointer: the mdspan every View is (Kokkos 4.4+),
  // without its reference-counting accessor.
  using Md = typename ViewType::mdspan_type;
  const Kokkos::mdspan<typename ViewType::value_type, typename Md::extents_type,
                       typename Md::layout_type>
      span(view.data(), view.mapping());
  return mdspan::ToTensor(span, std::move(owner), DeviceOf<Space>());
}

/// A tensor over `view`'s elements (zero copy), as ToTensor(view, owner), whose hold is a
/// copy of `view` (MakeOwner): a managed View's copy holds a reference to its allocation, so
/// the allocation lives until the last consumer of the tensor and its exports lets go, and is
/// freed on that thread, which must be before Kokkos::finalize(). An unmanaged View (use_count
/// 0: a View of memory Kokkos does not own) gives a tensor without a hold: pass its owner to
/// ToTensor(view, owner). Throws Error(kOutOfMemory) when the hold cannot be allocated; nothing
/// is taken on failure.
// KOK-2: the View's own reference to its allocation is the hold.
template <class DataType, class... Properties>
Tensor ToTensor(const Kokkos::View<DataType, Properties...>& view) {
  std::shared_ptr<const void> owner;
  if (view.use_count() > 0) owner = MakeOwner(view);
  return ToTensor(view, std::move(owner));
}

/// The View type View() returns: `DataType` (e.g. `float**`, `const double*[3]`) in `Layout`
/// and `Space`, unmanaged (Kokkos::MemoryTraits<Kokkos::Unmanaged>): it never frees the memory.
template <class DataType, class Layout = Kokkos::LayoutRight, class Space = Kokkos::HostSpace>
using UnmanagedView =
    Kokkos::View<DataType, Layout, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// `tensor`'s elements as an unmanaged Kokkos::View (zero copy), which borrows: valid while
/// `tensor`'s descriptor holds the memory (keep the tensor alive as long as the View and its
/// copies are used). Throws dlbridge::Error naming what does not fit: kUnsupportedDevice when
/// the tensor's device is not `Space`'s (CheckImportDevice); then the mdspan bridge's checks
/// (see MDS-5, see MDS-6, see MDS-7, see MDS-8): ndim and dtype, static extents, the strides
/// `Layout` needs (LayoutRight and LayoutLeft: contiguous, no padding; LayoutStride: positive
/// strides that do not overlap), kReadOnly for a mutable `DataType` over a read-only tensor (name
/// const elements), alignment. A layout other than these stops the build.
// KOK-5: the mdspan bridge's checks, then Kokkos' own array layout from the checked mdspan.
template <class DataType, class Layout = Kokkos::LayoutRight, class Space = Kokkos::HostSpace>
UnmanagedView<DataType, Layout, Space> View(const Tensor& tensor) {
  using Result = UnmanagedView<DataType, Layout, Space>;
  using Md = Kokkos::mdspan<typename Result::value_type, typename Result::extents_type,
                            typename detail::MdspanLayout<Layout>::type>;
  CheckImportDevice<Space>(tensor);
  // A space the CPU reads (Host, the pinned ones) reads the memory here: the host rule too,
  // which also reads the memory space (see HLP-4). Device spaces read it where it lives; their
  // device was checked above.
  const DeviceTypeInfo* row = FindDeviceType(SpaceRowOf<Space>().device_type);
  mdspan::ViewOptions where;
  where.any_device = row == nullptr || !row->host_addressable;
  const Md span = mdspan::View<Md>(tensor, where);
  Layout layout;
  for (std::size_t r = 0; r < Md::rank(); ++r) {
    layout.dimension[r] = static_cast<std::size_t>(span.extent(r));
    if constexpr (std::is_same_v<Layout, Kokkos::LayoutStride>) {
      layout.stride[r] = static_cast<std::size_t>(span.stride(r));
    }
  }
  return Result(span.data_handle(), layout);
}

}  // namespace kokkos
}  // namespace dlbridge
