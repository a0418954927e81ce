/// @file
/// The mdspan bridge (spec/bridges.md, MDS-*): any mdspan with pointer access and a strided
/// layout (layout_right, layout_left, layout_stride; static or dynamic extents; any index
/// type) as a dlbridge::Tensor with its owner kept alive, and a Tensor viewed as the mdspan
/// type the caller names, after every check that type needs. One code for every mdspan family:
/// it is a template over the mdspan type and names no namespace, so `std::mdspan` (C++23,
/// `__cpp_lib_mdspan`) and Kokkos' reference `Kokkos::mdspan` (`<mdspan/mdspan.hpp>`) take
/// the same path. Header-only (target dlbridge::mdspan); include your mdspan first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::mdspan
/// The mdspan bridge: ToTensor (mdspan to dlbridge) and View (dlbridge to an mdspan type).
namespace dlbridge {
namespace mdspan {

/// How View checks the tensor's device.
struct ViewOptions {
  /// false (default): the memory must be host-readable (see HLP-4), as an mdspan read on the
  /// CPU needs. true: the caller will read the mdspan where the tensor's memory lives (a GPU
  /// kernel, a Kokkos device space) and has checked that itself: any device is accepted and
  /// nothing is read through the pointer here.
  bool any_device = false;
};

namespace detail {

inline constexpr kit::Site kToTensor{"mdspan", "ToTensor"};
inline constexpr kit::Site kView{"mdspan", "View"};

// An mdspan whose elements are `data_handle()[offset]`: a pointer handle and a plain
// reference (default_accessor, aligned_accessor); proxies (atomic_accessor) are not memory.
template <class M>
inline constexpr bool kPointerAccess =
    std::is_same_v<typename M::data_handle_type, typename M::element_type*>&&
        std::is_same_v<typename M::reference, typename M::element_type&>;

template <class Mapping, std::size_t Rank = Mapping::extents_type::rank()>
using StrideArray = std::array<typename Mapping::index_type, Rank>;

// layout_stride: the mapping is built from extents and strides.
template <class Mapping>
inline constexpr bool kFromStrides =
    std::is_constructible_v<Mapping, const typename Mapping::extents_type&,
                            const StrideArray<Mapping>&>;

// layout_right, layout_left: the mapping is built from extents alone and computes its strides.
template <class Mapping>
inline constexpr bool kFromExtents =
    !kFromStrides<Mapping> &&
    std::is_constructible_v<Mapping, const typename Mapping::extents_type&>;

// An index (extent or stride) as int64; an unsigned one past INT64_MAX is refused, never
// wrapped (see HLP-9).
template <class Index>
int64_t ToInt64(Index value, const char* what, std::size_t r) {
  if constexpr (std::is_unsigned_v<Index>) {
    if (static_cast<uint64_t>(value) > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      kToTensor.Fail(ErrorCode::kOverflow, std::string(what) + "[" + std::to_string(r) + "] is " +
                                               std::to_string(value) + ", past INT64_MAX");
    }
  }
  return static_cast<int64_t>(value);
}

// Whether `value` (>= 0) fits the index type.
template <class Index>
constexpr bool Fits(int64_t value) noexcept {
  return value >= 0 &&
         static_cast<uint64_t>(value) <= static_cast<uint64_t>(std::numeric_limits<Index>::max());
}

// a * b, or UINT64_MAX when the product does not fit (it then fits no index type either).
constexpr uint64_t SaturatingMul(uint64_t a, uint64_t b) noexcept {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

}  // namespace detail

/// A tensor over `span`'s elements (zero copy), held alive by `owner` — the shared_ptr that
/// owns the memory, or MakeOwner(...) of whatever does — until the last consumer of the
/// tensor and its exports lets go. Shape: the extents; strides in elements: the mapping's
/// `stride(r)`; dtype DataTypeOf<element_type>() (a type DLPack cannot name stops the build,
/// see HLP-10); the descriptor spans `required_span_size()` elements from `data_handle()`,
/// element zero at byte offset 0; an mdspan of const elements exports read-only. `device`
/// (default kDLCPU) says where the memory is: its memory space is the device table's (a
/// CUDA pointer: {kDLCUDA, ordinal or -1 to read it from the pointer}). A null `owner`
/// leaves the tensor without a hold: ToDLPackVersioned/ToDLPack then refuse it
/// (Error(kNoHold)) unless ExportOptions::allow_unowned says the caller keeps the memory
/// alive. Throws Error(kUnsupportedDevice) for a device type no memory space exports, and
/// Error(kOverflow) for a span past int64 bytes; nothing is taken on failure.
// MDS-1: extents, the mapping's strides and its required span, zero copy.
template <class MdSpan>
Tensor ToTensor(const MdSpan& span, std::shared_ptr<const void> owner,
                DLDevice device = DLDevice{kDLCPU, 0}) {
  using T = typename MdSpan::element_type;
  using Mapping = typename MdSpan::mapping_type;
  constexpr std::size_t kRank = MdSpan::rank();
  // MDS-4: what the bridge cannot describe stops the build.
  static_assert(detail::kPointerAccess<MdSpan>,
                "dlbridge::mdspan::ToTensor: the mdspan's accessor does not give plain "
                "references through a pointer (data_handle_type T*, reference T&): a DLPack "
                "tensor is memory; use default_accessor");
  static_assert(Mapping::is_always_strided(),
                "dlbridge::mdspan::ToTensor: the layout is not always strided; DLPack "
                "describes strided layouts only (layout_right, layout_left, layout_stride)");
  const Mapping& mapping = span.mapping();
  std::array<int64_t, kRank> shape{};
  std::array<int64_t, kRank> strides{};
  if constexpr (kRank > 0) {  // a rank-0 mapping has no stride()
    for (std::size_t r = 0; r < kRank; ++r) {
      shape[r] = detail::ToInt64(span.extent(r), "extent", r);
      strides[r] = detail::ToInt64(mapping.stride(r), "stride", r);
    }
  }
  kit::StridedArray array;
  array.data = span.data_handle();
  array.dtype = DataTypeOf<std::remove_cv_t<T>>();
  array.ndim = static_cast<int32_t>(kRank);
  array.shape = shape.data();
  array.strides = strides.data();
  array.device = device;
  // MDS-3: const elements export read-only.
  array.read_only = std::is_const_v<T>;
  // MDS-2: the caller's owner is the hold; none leaves the allow_unowned opt-in (see EXP-3).
  return kit::Describe(array, std::move(owner), detail::kToTensor);
}

/// `tensor`'s elements as the mdspan type `MdSpan` (e.g. `std::mdspan<float,
/// std::dextents<std::size_t, 2>, std::layout_left>` or its Kokkos spelling), zero copy. The
/// mdspan borrows: it is valid while `tensor`'s descriptor holds the memory. Throws
/// dlbridge::Error naming the tensor's layout and what `MdSpan` needs, checked in this order
/// (the kit's view checks first, see KIT-3): kInvalidShape when ndim is not `MdSpan::rank()`;
/// kInvalidDtype when the dtype is not DataTypeOf<element_type>(); kReadOnly for mutable
/// elements over a read-only tensor (name const elements); kOverflow for a span past int64;
/// kUnsupportedDevice for memory the CPU cannot read, unless `options.any_device`;
/// kInvalidArgument when element zero is not aligned to the element type; then
/// kInvalidShape when a static extent differs from the shape; kOverflow when an extent, a
/// stride or the span does not fit `index_type`; kInvalidStrides when the strides are not the
/// layout's: layout_right and layout_left take exactly their contiguous strides,
/// layout_stride takes positive strides whose elements do not overlap (no negative or zero
/// stride: mdspan's layout_stride requires a unique mapping with strides > 0); the stride of
/// an extent-1 dimension, and every stride of a tensor without elements, is free (no index
/// reaches it). A layout other than these (one whose mapping is built neither from extents
/// nor from extents and strides) or a non-pointer accessor does not compile.
// MDS-5: the rank and the dtype come first: every later check reads them.
template <class MdSpan>
MdSpan View(const Tensor& tensor, const ViewOptions& options = {}) {
  using T = typename MdSpan::element_type;
  using Mapping = typename MdSpan::mapping_type;
  using Extents = typename MdSpan::extents_type;
  using Index = typename MdSpan::index_type;
  constexpr std::size_t kRank = MdSpan::rank();
  static_assert(detail::kPointerAccess<MdSpan>,
                "dlbridge::mdspan::View: the mdspan's accessor does not give plain references "
                "through a pointer (data_handle_type T*, reference T&); use default_accessor");
  static_assert(detail::kFromStrides<Mapping> || detail::kFromExtents<Mapping>,
                "dlbridge::mdspan::View: the layout's mapping is built neither from extents "
                "(layout_right, layout_left) nor from extents and strides (layout_stride)");
  const TensorLayout& layout = tensor.layout;
  const IndexSpan shape = layout.Shape();
  const IndexSpan strides = layout.Strides();
  // The kit's checks (see KIT-3): rank, dtype, read-only (MDS-3: a mutable mdspan would let
  // its user write to a read-only tensor), span, host-readable memory unless the caller reads
  // it where it lives (MDS-9, see HLP-4), alignment (MDS-8: every element is aligned when
  // element zero is). The strides wait for the mapping (MDS-7).
  kit::ViewNeeds needs;
  needs.view = "the mdspan";
  needs.dtype = DataTypeOf<std::remove_cv_t<T>>();
  needs.min_ndim = needs.max_ndim = static_cast<int32_t>(kRank);
  needs.writes = !std::is_const_v<T>;
  needs.read_only_advice = "name an mdspan of const elements";
  needs.any_device = options.any_device;
  needs.alignment = alignof(T);
  const kit::CheckedView checked = kit::CheckView(tensor, needs, detail::kView);
  // MDS-6: static extents equal, dynamic ones and the index space fit index_type.
  std::array<Index, kRank> extents{};
  bool empty = false;
  for (std::size_t r = 0; r < kRank; ++r) {
    const std::size_t fixed = Extents::static_extent(r);
    if (fixed != static_cast<std::size_t>(-1) &&  // dynamic_extent in every family
        static_cast<uint64_t>(shape[r]) != static_cast<uint64_t>(fixed)) {
      detail::kView.Fail(ErrorCode::kInvalidShape,
                         "shape[" + std::to_string(r) + "] is " + std::to_string(shape[r]) + " (" +
                             kit::LayoutText(layout) + ") but the mdspan's static extent " +
                             std::to_string(r) + " is " + std::to_string(fixed));
    }
    if (!detail::Fits<Index>(shape[r])) {
      detail::kView.Fail(ErrorCode::kOverflow, "shape[" + std::to_string(r) + "] is " +
                                                   std::to_string(shape[r]) +
                                                   ", past the mdspan's index_type");
    }
    extents[r] = static_cast<Index>(shape[r]);
    empty = empty || shape[r] == 0;
  }
  const int64_t count = checked.elements;
  if (!detail::Fits<Index>(count)) {
    detail::kView.Fail(ErrorCode::kOverflow, "the tensor has " + std::to_string(count) +
                                                 " elements, past the mdspan's index_type");
  }
  const Extents ext(extents);
  // MDS-7: the strides the layout can express, the free ones aside.
  Mapping mapping{};
  if constexpr (detail::kFromExtents<Mapping>) {
    mapping = Mapping(ext);
    std::array<int64_t, kRank> exact{};
    if constexpr (kRank > 0) {  // a rank-0 mapping has no stride()
      for (std::size_t r = 0; r < kRank; ++r) exact[r] = static_cast<int64_t>(mapping.stride(r));
    }
    kit::CheckStrides(layout, kit::StrideRule::kExact, exact.data(), "the mdspan's layout",
                      detail::kView);
  } else {
    // Free strides get values the layout accepts: an extent-1 dimension the largest reach
    // (past every other element, so no overlap), every dimension of an empty tensor 1.
    // mdspan's layout_stride requires a unique mapping with strides > 0.
    kit::CheckStrides(layout, kit::StrideRule::kPositiveUnique, nullptr, "mdspan's layout_stride",
                      detail::kView);
    uint64_t reach = 1;
    for (std::size_t r = 0; r < kRank && !empty; ++r) {
      if (shape[r] <= 1) continue;
      if (!detail::Fits<Index>(strides[r])) {
        detail::kView.Fail(ErrorCode::kOverflow, "strides[" + std::to_string(r) + "] is " +
                                                     std::to_string(strides[r]) +
                                                     ", past the mdspan's index_type");
      }
      const uint64_t far =
          detail::SaturatingMul(static_cast<uint64_t>(strides[r]), static_cast<uint64_t>(shape[r]));
      if (far > reach) reach = far;
    }
    if (reach > static_cast<uint64_t>(std::numeric_limits<Index>::max())) {
      detail::kView.Fail(ErrorCode::kOverflow, "the tensor reaches " + std::to_string(reach) +
                                                   " elements, past the mdspan's index_type");
    }
    detail::StrideArray<Mapping> given{};
    uint64_t next = 1;  // empty: row-major strides of the extents with 0 read as 1
    for (std::size_t r = kRank; r-- > 0;) {
      if (!empty) {
        given[r] = static_cast<Index>(shape[r] <= 1 ? reach : strides[r]);
      } else if (next <= static_cast<uint64_t>(std::numeric_limits<Index>::max())) {
        given[r] = static_cast<Index>(next);
        next = detail::SaturatingMul(next, static_cast<uint64_t>(shape[r] > 1 ? shape[r] : 1));
      } else {
        detail::kView.Fail(ErrorCode::kOverflow, "the extents of the empty tensor (" +
                                                     kit::LayoutText(layout) +
                                                     ") reach past the mdspan's index_type");
      }
    }
    mapping = Mapping(ext, given);
  }
  T* data = static_cast<T*>(checked.data);
  return MdSpan(data, mapping);
}

}  // namespace mdspan
}  // namespace dlbridge
