/// @file
/// The OpenCV bridge (spec/bridges.md, CV-*): a cv::Mat as a dlbridge::Tensor that holds a
/// reference to the Mat's memory (its refcount, `u->refcount`), and a host Tensor as a
/// cv::Mat over its memory whose last reference drops the tensor's hold. Header-only; needs
/// OpenCV 4's core module (target dlbridge::opencv). cv::cuda::GpuMat is not bridged.
#pragma once

#include <climits>
#include <cstdint>
#include <memory>
#include <new>
#include <opencv2/core.hpp>
#ifndef CV_MAX_DIM  // cvdef.h has it in newer OpenCV 4; older ones, in the C API's header
#include <opencv2/core/types_c.h>
#endif
#include <string>
#include <type_traits>
#include <utility>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/owner.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::opencv
/// The OpenCV bridge: FromMat (OpenCV to dlbridge), ToMat (dlbridge to OpenCV) and the depth
/// table between them.
namespace dlbridge {
namespace opencv {

/// Which dimension of a tensor ToMat reads as the Mat's channels.
enum class Channels {
  /// A 3-D tensor is (rows, cols, channels), the layout of an image (and of cv2's NumPy
  /// arrays); a tensor of any other ndim is single-channel.
  kAuto,
  /// The last dimension is always the channels (ndim >= 2); the others are the Mat's sizes.
  kLast,
  /// Single-channel: every dimension is one of the Mat's sizes (a 3-D volume stays 3-D).
  kNone,
};

/// Options of ToMat.
struct MatOptions {
  /// Where the channels are (see Channels).
  Channels channels = Channels::kAuto;
  /// Give a Mat over a tensor whose descriptor holds nothing (no owner, no release): the
  /// caller then keeps the memory valid for as long as any Mat uses it. Off by default: such
  /// a tensor is refused with Error(kNoHold).
  bool allow_unowned = false;
};

namespace detail {

// The bridge's calls, each failing through the kit's one path.
inline constexpr kit::Site kFromMat{"opencv", "FromMat"};
inline constexpr kit::Site kToMat{"opencv", "ToMat"};
inline constexpr kit::Site kDataTypeOfDepth{"opencv", "DataTypeOfDepth"};
inline constexpr kit::Site kDepthOfDataType{"opencv", "DepthOfDataType"};

// CV-1: one table of OpenCV depths and DLPack dtypes, read in both directions. The depths
// OpenCV 5 adds are listed where this OpenCV defines them.
struct DepthEntry {
  int depth;
  DLDataType dtype;
  const char* name;
};
inline constexpr DepthEntry kDepths[] = {
    {CV_8U, {kDLUInt, 8, 1}, "CV_8U"},        {CV_8S, {kDLInt, 8, 1}, "CV_8S"},
    {CV_16U, {kDLUInt, 16, 1}, "CV_16U"},     {CV_16S, {kDLInt, 16, 1}, "CV_16S"},
    {CV_32S, {kDLInt, 32, 1}, "CV_32S"},      {CV_32F, {kDLFloat, 32, 1}, "CV_32F"},
    {CV_64F, {kDLFloat, 64, 1}, "CV_64F"},    {CV_16F, {kDLFloat, 16, 1}, "CV_16F"},
#ifdef CV_16BF
    {CV_16BF, {kDLBfloat, 16, 1}, "CV_16BF"},
#endif
#ifdef CV_Bool
    {CV_Bool, {kDLBool, 8, 1}, "CV_Bool"},
#endif
#ifdef CV_64U
    {CV_64U, {kDLUInt, 64, 1}, "CV_64U"},
#endif
#ifdef CV_32U
    {CV_32U, {kDLUInt, 32, 1}, "CV_32U"},
#endif
#ifdef CV_64S
    {CV_64S, {kDLInt, 64, 1}, "CV_64S"},
#endif
};

inline const DepthEntry* FindDepth(int depth) noexcept {
  for (const DepthEntry& entry : kDepths) {
    if (entry.depth == depth) return &entry;
  }
  return nullptr;
}

inline const DepthEntry* FindDtype(DLDataType dtype) noexcept {
  for (const DepthEntry& entry : kDepths) {
    if (SameDataType(entry.dtype, dtype)) return &entry;
  }
  return nullptr;
}

inline std::string AcceptedDtypes() {
  std::string text;
  for (const DepthEntry& entry : kDepths) {
    text += (text.empty() ? "" : ", ") + DtypeName(entry.dtype) + " (" + entry.name + ")";
  }
  return text;
}

// CV-2: a Mat's sizes and byte steps as a tensor's shape and element strides, the channels
// as the last dimension (stride 1) when there are several.
inline Tensor Describe(const cv::Mat& mat) {
  const int depth = mat.depth();
  const DepthEntry* entry = FindDepth(depth);
  if (entry == nullptr) {
    kFromMat.Fail(ErrorCode::kUnsupportedDtype,
                  "the Mat's depth " + std::to_string(depth) +
                      " has no DLPack dtype here; accepted: " + AcceptedDtypes());
  }
  const int channels = mat.channels();
  const int dims = mat.dims;
  const auto valueBytes = static_cast<int64_t>(mat.elemSize1());
  int64_t shape[CV_MAX_DIM + 1];
  int64_t strides[CV_MAX_DIM + 1];
  int32_t ndim = 0;
  // A default-constructed Mat has dims 0: it exports as (0, 0), as its rows and cols say.
  const int matDims = dims >= 2 ? dims : 2;
  for (int i = 0; i < matDims; ++i) {
    const int64_t extent = dims >= 2 ? mat.size[i] : 0;
    const auto step = static_cast<int64_t>(dims >= 2 ? mat.step[i] : 0);
    // CV-3: a step that is not a whole number of values has no element stride.
    if (step % valueBytes != 0) {
      kFromMat.Fail(ErrorCode::kInvalidStrides,
                    "step[" + std::to_string(i) + "] is " + std::to_string(step) +
                        " bytes, not a multiple of the value size " + std::to_string(valueBytes) +
                        "; DLPack strides count elements: clone() the Mat first");
    }
    shape[ndim] = extent;
    strides[ndim] = step / valueBytes;
    ++ndim;
  }
  if (channels > 1) {
    shape[ndim] = channels;
    strides[ndim] = 1;
    ++ndim;
  }
  kit::StridedArray array;
  array.data = mat.data;
  array.dtype = entry->dtype;
  array.ndim = ndim;
  array.shape = shape;
  array.strides = strides;
  return kit::Describe(array, nullptr, kFromMat);
}

template <class M>
inline constexpr bool kIsMat =
    std::is_base_of_v<cv::Mat, std::remove_cv_t<std::remove_reference_t<M>>>;

// The hold of an imported tensor, in the UMatData that every Mat sharing the memory counts
// references to: OpenCV calls the allocator's deallocate when the last one goes. CV-8: an
// import of FromMat's export holds a Mat header, so the memory is still OpenCV's to free.
struct HeldData : cv::UMatData {
  explicit HeldData(const cv::MatAllocator* allocator) : cv::UMatData(allocator) {}
  MemoryDescriptor hold;
};

// CV-6: deallocate drops the hold, once, when the last Mat (or UMat) sharing it is gone.
// New memory that OpenCV asks of it (a create() on a Mat whose allocator it is) comes from
// OpenCV's standard allocator, which then frees it.
class HoldAllocator final : public cv::MatAllocator {
 public:
  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data, size_t* step,
                         cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    return cv::Mat::getStdAllocator()->allocate(dims, sizes, type, data, step, flags, usage);
  }
  bool allocate(cv::UMatData* data, cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    return cv::Mat::getStdAllocator()->allocate(data, flags, usage);
  }
  void deallocate(cv::UMatData* data) const override {
    // Only HeldData names this allocator as its currAllocator (ToMat sets it).
    delete static_cast<HeldData*>(data);  // ~MemoryDescriptor drops the hold here
  }
};

// One allocator per process image, never destroyed: a Mat may outlive static destruction.
inline const HoldAllocator& TheHoldAllocator() {
  static const HoldAllocator* const allocator = new HoldAllocator();
  return *allocator;
}

inline int ToInt(int64_t value, const char* what, int index) {
  if (value > INT_MAX) {
    kToMat.Fail(ErrorCode::kInvalidShape, std::string(what) + "[" + std::to_string(index) +
                                              "] is " + std::to_string(value) +
                                              ", past INT_MAX, and cv::Mat sizes are int");
  }
  return static_cast<int>(value);
}

}  // namespace detail

/// The dtype of an OpenCV depth (CV_8U uint8, CV_8S int8, CV_16U uint16, CV_16S int16,
/// CV_32S int32, CV_32F float32, CV_64F float64, CV_16F float16; where this OpenCV defines
/// them, CV_16BF bfloat16, CV_Bool bool, CV_32U uint32, CV_64U uint64, CV_64S int64).
/// Throws Error(kUnsupportedDtype) for any other depth, naming it and the accepted ones.
inline DLDataType DataTypeOfDepth(int depth) {
  const detail::DepthEntry* entry = detail::FindDepth(depth);
  if (entry == nullptr) {
    detail::kDataTypeOfDepth.Fail(
        ErrorCode::kUnsupportedDtype,
        "depth " + std::to_string(depth) + " is none of " + detail::AcceptedDtypes());
  }
  return entry->dtype;
}

/// The OpenCV depth of `dtype` (one lane), the inverse of DataTypeOfDepth. Throws
/// Error(kUnsupportedDtype) for a dtype OpenCV has no depth for (complex, float8, int64
/// before OpenCV 5, lanes > 1, ...), naming it and the accepted dtypes.
inline int DepthOfDataType(DLDataType dtype) {
  const detail::DepthEntry* entry = detail::FindDtype(dtype);
  if (entry == nullptr) {
    detail::kDepthOfDataType.Fail(ErrorCode::kUnsupportedDtype,
                                  "dtype " + kit::DtypeText(dtype) +
                                      " has no OpenCV depth; accepted: " +
                                      detail::AcceptedDtypes() + ": convert the tensor first");
  }
  return entry->depth;
}

/// A tensor over `mat`'s values, zero copy. The shape is the Mat's sizes (rows, cols for a
/// 2-D Mat; `mat.size[i]` for an n-d one), with the channels as one more, last dimension
/// (stride 1) when channels() > 1; the strides are `mat.step[i]` in values, so a ROI (a
/// non-continuous Mat) keeps its row pitch. Dtype DataTypeOfDepth(mat.depth()), host memory
/// (kDLCPU), element zero at `mat.data`. A Mat passed as const (`const cv::Mat&`, a const
/// object) exports read-only (DLPACK_FLAG_BITMASK_READ_ONLY).
///
/// Ownership: when `mat` owns its memory (OpenCV allocated it: `mat.u` set), the tensor's
/// descriptor holds a copy of the Mat header (MakeOwner), that is one reference to its
/// refcount: the memory lives until the last holder (the descriptor, the deleter of a
/// DLPack tensor it is exported into, an import of that) lets go, on whichever thread, and
/// OpenCV's other Mats keep their own references. A Mat over external memory
/// (`cv::Mat(rows, cols, type, pointer)`, `mat.u` null) owns nothing, so the tensor holds
/// nothing: exporting it is refused (Error(kNoHold)) unless ExportOptions::allow_unowned;
/// pass the memory's owner to FromMat(mat, owner) instead.
///
/// On failure throws Error and takes no reference: kUnsupportedDtype for a depth without a
/// dtype, kInvalidStrides for a step that is not a multiple of the value size,
/// kOutOfMemory when the hold cannot be allocated.
// CV-2, CV-4: the Mat's refcount is the hold; const exports read-only.
template <class M, class = std::enable_if_t<detail::kIsMat<M>>>
Tensor FromMat(M&& mat) {
  const cv::Mat& view = mat;
  Tensor t = detail::Describe(view);
  if (view.u != nullptr) t.descriptor.SetOwner(MakeOwner(cv::Mat(view)));
  if constexpr (std::is_const_v<std::remove_reference_t<M>>) {
    t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  }
  return t;
}

/// FromMat(mat) with `owner` as the hold instead of the Mat's refcount: for a Mat over
/// memory OpenCV does not own (a camera buffer, another library's array), `owner` is what
/// keeps that memory alive (a shared_ptr, or MakeOwner(...)). Layout, read-only and failures
/// as FromMat(mat); a null `owner` leaves the tensor without a hold. Nothing is taken on
/// failure.
template <class M, class = std::enable_if_t<detail::kIsMat<M>>>
Tensor FromMat(M&& mat, std::shared_ptr<const void> owner) {
  const cv::Mat& view = mat;
  Tensor t = detail::Describe(view);
  t.descriptor.SetOwner(std::move(owner));
  if constexpr (std::is_const_v<std::remove_reference_t<M>>) {
    t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  }
  return t;
}

/// A cv::Mat over `tensor`'s memory, zero copy: `data` is element zero, the type
/// CV_MAKETYPE(DepthOfDataType(dtype), channels), the sizes the tensor's dimensions less the
/// channels' (see MatOptions::channels; a 1-D tensor of n values is an n x 1 Mat, as OpenCV
/// makes 1-D Mats), and `step[i]` the strides in bytes, so a tensor with a row pitch (a
/// slice, a padded image) becomes a non-continuous Mat.
///
/// What a cv::Mat can describe, checked before anything moves (CV-5): host memory (space
/// "host", device 0 or kDLCPU; kUnsupportedDevice otherwise); a dtype with a depth
/// (kUnsupportedDtype); channels at most CV_CN_MAX and at least one dimension besides them,
/// at most CV_MAX_DIM, extents up to INT_MAX (kInvalidShape); no negative stride, the
/// channels one value apart, the last Mat dimension's values one element (all channels)
/// apart, and every other dimension's step at least the next one's extent times its step
/// (OpenCV's 2-D rule: rows never overlap; a zero stride broadcasts and is refused), all
/// kInvalidStrides (dimensions of extent 0 or 1 are free, a negative stride too); a writable tensor
/// (kReadOnly: cv::Mat has no read-only mode); element zero aligned for its value type
/// (kInvalidArgument); and every export check of ToDLPackVersioned (ExportPlan: bounds, a hold
/// unless MatOptions::allow_unowned, kNoHold).
///
/// Ownership, on success: the tensor's hold moves out of `tensor.descriptor` (left empty)
/// into the Mat's reference-counted UMatData, whose allocator drops it exactly once when the
/// last Mat sharing the memory goes (copies, ROIs, `getUMat` included), on whichever thread.
/// A tensor without elements gives an empty Mat of its sizes and type, and its hold is
/// dropped before ToMat returns. With MatOptions::allow_unowned and no hold the Mat simply
/// points at the memory. On failure: Error as above (kOverflow when a byte step or the bytes a
/// dimension spans overflow int64, kOutOfMemory when the UMatData cannot be
/// allocated, or a cv::Exception's message as kInvalidArgument) and `tensor` is unchanged: its
/// hold stays with the caller.
// CV-5, CV-6: what a Mat can describe, then the hold moves into the Mat's UMatData.
inline cv::Mat ToMat(Tensor&& tensor, const MatOptions& options = {}) {
  const MemoryDescriptor& descriptor = tensor.descriptor;
  // The dtype first, as the kit orders its own (see KIT-3): the kit's alignment is the
  // element's size, which a dtype without a depth must not be refused by.
  const int depth = DepthOfDataType(tensor.layout.Dtype());
  kit::ViewNeeds needs;
  needs.view = "a cv::Mat";
  needs.strides = kit::StrideRule::kNonNegative;  // cv::Mat steps are unsigned
  needs.writes = true;                            // cv::Mat has no read-only mode
  needs.read_only_advice = "copy it first (clone() the Mat of a copy)";
  kit::CheckView(tensor, needs, detail::kToMat);  // host, read-only, strides, span, alignment
  const TensorLayout& layout = tensor.layout;
  const int32_t ndim = layout.Ndim();
  const IndexSpan shape = layout.Shape();
  const IndexSpan strides = layout.Strides();
  const bool channelsLast =
      options.channels == Channels::kLast || (options.channels == Channels::kAuto && ndim == 3);
  const int32_t matDims = channelsLast ? ndim - 1 : ndim;
  if (matDims < 1 || matDims > CV_MAX_DIM) {
    detail::kToMat.Fail(ErrorCode::kInvalidShape,
                        "ndim is " + std::to_string(ndim) +
                            (channelsLast ? " with the channels last" : "") + ", leaving " +
                            std::to_string(matDims) + " Mat dimensions; a cv::Mat has 1 to " +
                            std::to_string(CV_MAX_DIM) + ": reshape the tensor first");
  }
  int64_t channels = 1;
  if (channelsLast) {
    channels = shape[matDims];
    if (channels < 1 || channels > CV_CN_MAX) {
      detail::kToMat.Fail(
          ErrorCode::kInvalidShape,
          "the last dimension, the channels, is " + std::to_string(channels) +
              "; a cv::Mat has 1 to CV_CN_MAX (" + std::to_string(CV_CN_MAX) +
              ") channels: pass MatOptions::channels = Channels::kNone to read every "
              "dimension as a Mat dimension");
    }
  }
  if (channelsLast && channels > 1 && strides[matDims] != 1) {
    detail::kToMat.Fail(ErrorCode::kInvalidStrides,
                        "the channels' stride is " + std::to_string(strides[matDims]) +
                            " elements; a cv::Mat interleaves its channels (stride 1): copy the "
                            "tensor into channels-last C order first");
  }
  const auto valueBytes = static_cast<int64_t>(layout.Dtype().bits) / 8;
  int sizes[CV_MAX_DIM];
  size_t steps[CV_MAX_DIM];
  bool empty = false;
  // CV-7: sizes and byte steps, from the last Mat dimension outwards: each step covers at
  // least the next dimension.
  int64_t inner = channels * valueBytes;  // the bytes one index of the next dimension spans
  for (int32_t i = matDims - 1; i >= 0; --i) {
    const int64_t extent = shape[i];
    sizes[i] = detail::ToInt(extent, "shape", i);
    empty = empty || extent == 0;
    // Extent 0 or 1: any stride addresses one index, take the dense one. Otherwise the byte
    // step fits: the kit bounded the bytes every dimension reaches (see KIT-2).
    const int64_t step = extent > 1 ? strides[i] * valueBytes : inner;
    if (i == matDims - 1 && step != inner) {
      detail::kToMat.Fail(ErrorCode::kInvalidStrides,
                          "strides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
                              " elements but the last Mat dimension's "
                              "values must be adjacent (" +
                              std::to_string(channels) +
                              " element(s) apart, one per channel): copy the tensor into C order "
                              "first");
    }
    if (step < inner) {
      detail::kToMat.Fail(
          ErrorCode::kInvalidStrides,
          "strides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) +
              " elements, less than the " + std::to_string(inner / valueBytes) +
              " the next dimension spans; cv::Mat rows never overlap (no broadcast, "
              "no transposed layout): copy the tensor into C order first");
    }
    steps[i] = static_cast<size_t>(step);
    if (kit::CheckedMul(step, extent > 0 ? extent : 1, &inner)) {
      detail::kToMat.Fail(ErrorCode::kOverflow, "shape[" + std::to_string(i) + "] is " +
                                                    std::to_string(extent) + " at a step of " +
                                                    std::to_string(step) +
                                                    " bytes: the bytes it spans overflow int64");
    }
  }
  ExportOptions exportOptions;
  exportOptions.allow_unowned = options.allow_unowned;
  const ExportPlan plan(tensor, ExportKind::kVersioned, exportOptions);  // bounds, hold, ...
  auto* data = static_cast<unsigned char*>(plan.Data());  // element zero, null if empty
  const int type = CV_MAKETYPE(depth, static_cast<int>(channels));
  try {
    if (empty || data == nullptr) {
      cv::Mat mat(matDims, sizes, type);       // no elements: nothing allocated
      tensor.descriptor = MemoryDescriptor();  // nothing to keep alive
      return mat;
    }
    cv::Mat mat(matDims, sizes, type, data, matDims > 1 ? steps : nullptr);
    if (!descriptor.HasOwnership()) return mat;  // allow_unowned: the caller keeps the memory
    auto* held = new detail::HeldData(&detail::TheHoldAllocator());
    held->data = held->origdata = data;
    held->size = static_cast<size_t>(mat.dataend - mat.datastart);
    held->flags = static_cast<cv::UMatData::MemoryFlag>(cv::UMatData::USER_ALLOCATED);
    held->refcount = 1;  // `mat`'s reference
    // Nothing below throws: the hold moves only once the Mat is complete.
    held->hold = std::move(tensor.descriptor);
    mat.u = held;
    return mat;
  } catch (const std::bad_alloc&) {
    detail::kToMat.Fail(ErrorCode::kOutOfMemory, "out of memory for the Mat's header");
  } catch (const cv::Exception& error) {
    detail::kToMat.Fail(ErrorCode::kInvalidArgument,
                        std::string("OpenCV refused the layout: ") + error.what());
  }
}

/// FromMat under the bridges' one naming scheme (spec/bridges.md, "Naming"; see KIT-6).
template <class M, class = std::enable_if_t<detail::kIsMat<M>>>
Tensor ToTensor(M&& mat) {
  return FromMat(std::forward<M>(mat));
}
/// FromMat(mat, owner) under the bridges' one naming scheme (see KIT-6).
template <class M, class = std::enable_if_t<detail::kIsMat<M>>>
Tensor ToTensor(M&& mat, std::shared_ptr<const void> owner) {
  return FromMat(std::forward<M>(mat), std::move(owner));
}
/// ToMat under the bridges' one naming scheme: the hold moves into the Mat (see KIT-6).
inline cv::Mat Adopt(Tensor&& tensor, const MatOptions& options = {}) {
  return ToMat(std::move(tensor), options);
}

}  // namespace opencv
}  // namespace dlbridge
