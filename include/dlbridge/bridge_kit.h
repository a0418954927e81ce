/// @file
/// The bridge kit (spec/bridges.md, KIT-*): what every framework bridge does between a
/// dlbridge::Tensor and a framework's own view of memory, written once. A bridge describes a
/// framework's strided array for export with Describe, checks a tensor for the view it is
/// about to build with CheckView (host-readable, dtype, rank, read-only, strides including
/// negative and extent-1 dimensions, overflow-checked span, alignment), names dtypes and
/// layouts in messages with DtypeText and LayoutText, and fails through one Site. The six
/// bridges in bridges/ stand on it, and so can an eighth: it uses only the public API.
/// Header-only and framework-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "dlbridge/device_map.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/memory_space.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::kit
/// Helpers for bridge authors: Site, Describe, CheckView, DtypeText, LayoutText, CheckedMul.
namespace dlbridge {
namespace kit {

/// Where a bridge's message comes from, so that every message starts the same way:
/// "dlbridge::<bridge>::<call>: ". A bridge's public functions name themselves by the
/// framework's words for the two directions (spec/bridges.md, "Naming").
struct Site {
  const char* bridge;  ///< The bridge's namespace, e.g. "eigen".
  const char* call;    ///< The public function, e.g. "View".
  /// Throws Error(code, "dlbridge::<bridge>::<call>: " + message): a bridge's one failure path.
  [[noreturn]] void Fail(ErrorCode code, const std::string& message) const {
    throw Error(code, std::string("dlbridge::") + bridge + "::" + call + ": " + message);
  }
};

/// `*out = a * b`; true (and `*out` unspecified) when the product overflows int64.
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_mul_overflow(a, b, out);
#else
  if (a != 0 && b != 0) {
    const bool negative = (a < 0) != (b < 0);
    const uint64_t ua = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
    const uint64_t ub = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    if (ua > limit / ub) return true;
  }
  *out = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  return false;
#endif
}

/// `*out = a + b`; true (and `*out` unspecified) when the sum overflows int64.
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_add_overflow(a, b, out);
#else
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
  *out = a + b;
  return false;
#endif
}

/// A dtype's name for a message (DtypeName), also for dtypes DtypeName refuses:
/// "(code c, bits b, lanes l)".
inline std::string DtypeText(DLDataType dtype) {
  try {
    return DtypeName(dtype);
  } catch (const Error&) {
    return "(code " + std::to_string(dtype.code) + ", bits " + std::to_string(dtype.bits) +
           ", lanes " + std::to_string(dtype.lanes) + ")";
  }
}

/// "[a, b, c]" for `n` values.
template <class Values>
std::string ListText(const Values& values, std::size_t n) {
  std::string text = "[";
  for (std::size_t i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// "shape [..], strides [..]" (strides in elements): how a refusal names the layout it read.
inline std::string LayoutText(const TensorLayout& layout) {
  return "shape " + ListText(layout.Shape(), layout.Shape().size) + ", strides " +
         ListText(layout.Strides(), layout.Strides().size);
}

/// How far a strided array reaches from element zero, in elements: the lowest and highest
/// offsets any index gives (both 0 for an array without elements).
struct Reach {
  int64_t low = 0;     ///< The lowest element offset (<= 0: negative strides reach below).
  int64_t high = 0;    ///< The highest element offset (>= 0).
  bool empty = false;  ///< Whether some extent is 0 (no element at all).
};

/// The reach of `ndim` extents and strides (elements), overflow-checked: throws
/// Error(kOverflow) through `site` when an offset, or the bytes from the lowest to the highest
/// element at `itemBytes` each, do not fit int64.
// KIT-2: the span from the lowest to the highest element, every step checked.
inline Reach ReachOf(int32_t ndim, const int64_t* shape, const int64_t* strides, int64_t itemBytes,
                     const Site& site) {
  Reach r;
  for (int32_t i = 0; i < ndim; ++i) r.empty = r.empty || shape[i] == 0;
  if (r.empty) return r;
  for (int32_t i = 0; i < ndim; ++i) {
    int64_t far = 0;
    if (CheckedMul(shape[i] - 1, strides[i], &far) ||
        CheckedAdd(far < 0 ? r.low : r.high, far, far < 0 ? &r.low : &r.high)) {
      site.Fail(ErrorCode::kOverflow,
                "dimension " + std::to_string(i) + " (extent " + std::to_string(shape[i]) +
                    ", stride " + std::to_string(strides[i]) + ") reaches past INT64 elements");
    }
  }
  int64_t count = 0;
  int64_t bytes = 0;
  // r.low is INT64_MIN only where the count is past int64: -r.low would overflow.
  if (r.low == INT64_MIN || CheckedAdd(r.high, -r.low, &count) || CheckedAdd(count, 1, &count) ||
      CheckedMul(count, itemBytes, &bytes)) {
    site.Fail(ErrorCode::kOverflow, "the array spans past INT64_MAX bytes (elements " +
                                        std::to_string(r.low) + " to " + std::to_string(r.high) +
                                        " from element zero, " + std::to_string(itemBytes) +
                                        " bytes each)");
  }
  return r;
}

/// `layout`'s element count; Error(kOverflow) through `site`, naming the layout, past int64.
inline int64_t ElementCountOf(const TensorLayout& layout, const Site& site) {
  try {
    return layout.ElementCount();
  } catch (const Error& e) {
    site.Fail(e.code(),
              "the element count of the tensor (" + LayoutText(layout) + ") overflows int64");
  }
}

/// A framework's strided array, as Describe reads it.
struct StridedArray {
  const void* data = nullptr;         ///< Element zero (null only without elements).
  DLDataType dtype{kDLFloat, 32, 1};  ///< The element type (whole bytes per element).
  int32_t ndim = 0;                   ///< How many dimensions `shape` and `strides` have.
  const int64_t* shape = nullptr;     ///< The extents.
  const int64_t* strides = nullptr;   ///< In elements, any sign (zero broadcasts).
  DLDevice device{kDLCPU, 0};         ///< Where the memory is (the device table's row).
  bool read_only = false;             ///< Whether the framework forbids writing through it.
  const char* role = "data";          ///< The buffer's role ("component_0", ...).
};

/// A tensor over `array`'s elements (zero copy), held by `owner` (the shared_ptr that owns
/// the memory, or MakeOwner(...) of whatever does; null: no hold, so export needs
/// ExportOptions::allow_unowned, see EXP-3). The descriptor spans the bytes from the lowest
/// to the highest element, so negative and zero strides describe themselves, and element
/// zero sits at the layout's byte offset; an array without elements spans 0 bytes at `data`.
/// The memory space is the device table's for `array.device`; read_only sets
/// DLPACK_FLAG_BITMASK_READ_ONLY. Throws Error through `site`: kUnsupportedDevice for a device
/// type no memory space exports (naming those that do), kInvalidDtype for a dtype of
/// fractional bytes, kOverflow for a span past int64 (see KIT-2), and what TensorLayout
/// throws; `owner` is dropped (not kept anywhere) on failure.
// KIT-1: one description of a strided array for every bridge's export direction.
inline Tensor Describe(const StridedArray& array, std::shared_ptr<const void> owner,
                       const Site& site) {
  const DeviceTypeInfo* row = FindDeviceType(array.device.device_type);
  if (row == nullptr || !row->exported) {
    site.Fail(ErrorCode::kUnsupportedDevice,
              "device type " + std::to_string(array.device.device_type) + " (" +
                  DeviceTypeName(array.device.device_type) +
                  ") has no memory space that exports it; accepted: " +
                  DeviceTypeNames([](const DeviceTypeInfo& r) { return r.exported; }));
  }
  const int64_t bits = int64_t{array.dtype.bits} * array.dtype.lanes;
  if (bits == 0 || bits % 8 != 0) {
    site.Fail(ErrorCode::kInvalidDtype,
              "dtype " + DtypeText(array.dtype) + " has no whole number of bytes per element");
  }
  const int64_t itemBytes = bits / 8;
  const Reach reach = ReachOf(array.ndim, array.shape, array.strides, itemBytes, site);
  const auto* zero = static_cast<const unsigned char*>(array.data);
  const bool spans = !reach.empty && zero != nullptr;
  Tensor t;
  t.layout = TensorLayout::FromArrays(array.dtype, array.ndim, array.shape, array.strides,
                                      spans ? static_cast<uint64_t>(-reach.low * itemBytes) : 0);
  const char* space = MemorySpaceName(row->space);
  if (spans) {
    t.descriptor.Set(zero + reach.low * itemBytes, (reach.high - reach.low + 1) * itemBytes, space,
                     array.role);
  } else {
    t.descriptor.Set(zero, 0, space, array.role);
  }
  t.device = array.device;
  if (array.read_only) t.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  t.descriptor.SetOwner(std::move(owner));
  return t;
}

/// Which strides a framework's view can express. Dimensions of extent 0 or 1, and every
/// dimension of a tensor without elements, take any stride: no index steps along them.
enum class StrideRule {
  kAny,             ///< Any stride, zero and negative too.
  kNonNegative,     ///< No negative stride (Eigen's Stride, cv::Mat steps, libtorch 1.x).
  kPositiveUnique,  ///< > 0, no two indices on one element (mdspan's layout_stride).
  kRowMajor,        ///< Exactly C-contiguous (layout_right, a VTK or Viskores buffer).
  kColMajor,        ///< Exactly Fortran-contiguous (layout_left).
  kExact,           ///< Exactly ViewNeeds::exact_strides (a layout that computes its own).
};

/// What a framework's view of a tensor needs, for CheckView.
struct ViewNeeds {
  const char* view = "the view";  ///< The framework's view in a message: "an Eigen::Map".
  /// The element type the view reads; bits 0 (the default): any dtype, the bridge checks it.
  DLDataType dtype{0, 0, 0};
  int32_t min_ndim = 0;                       ///< The fewest dimensions the view takes.
  int32_t max_ndim = TensorLayout::kMaxDims;  ///< The most dimensions the view takes.
  StrideRule strides = StrideRule::kAny;      ///< Which strides the view expresses.
  /// For StrideRule::kExact: the ndim strides (elements) the view's layout computes.
  const int64_t* exact_strides = nullptr;
  /// Whether the view lets its user write: a read-only tensor is then refused (kReadOnly).
  bool writes = false;
  /// What to do instead of a writable view of a read-only tensor, for the message.
  const char* read_only_advice = "copy the tensor first";
  /// false (default): memory the CPU may read only (see HLP-4). true: the caller reads the
  /// view where the memory lives and has checked the device itself.
  bool any_device = false;
  /// Element zero's alignment in bytes; 0 (the default): the dtype's element size.
  std::size_t alignment = 0;
};

/// A tensor CheckView accepted.
struct CheckedView {
  void* data = nullptr;  ///< Element zero (a host address unless ViewNeeds::any_device).
  int64_t elements = 0;  ///< The element count (the product of the extents).
  Reach reach;           ///< How far the indices reach from element zero, in elements.
};

namespace internal {
/// CheckStrides for a layout whose element count the caller has already counted (CheckView
/// has it; CheckStrides counts it first). Throws kInvalidStrides naming the first dimension
/// that breaks `rule`. KIT-4: the stride rules, the free dimensions aside.
inline void CheckCountedStrides(const TensorLayout& layout, int64_t elements, StrideRule rule,
                                const int64_t* exact, const char* view, const Site& site) {
  if (elements == 0) return;  // no element, no step
  const int32_t ndim = layout.Ndim();
  const IndexSpan shape = layout.Shape();
  const IndexSpan strides = layout.Strides();
  const auto refuse = [&](std::size_t i, const std::string& why) {
    site.Fail(ErrorCode::kInvalidStrides,
              "strides[" + std::to_string(i) + "] is " + std::to_string(strides[i]) + " (" +
                  LayoutText(layout) + "); " + view + " " + why +
                  ": copy the tensor first (CopyToHost gives a C-contiguous copy)");
  };
  if (rule == StrideRule::kExact) {
    for (std::size_t i = 0; i < shape.size; ++i) {
      if (shape[i] > 1 && strides[i] != exact[i]) {
        refuse(i, "needs strides " + ListText(exact, shape.size) + " (extent-1 dimensions aside)");
      }
    }
  } else if (rule == StrideRule::kRowMajor || rule == StrideRule::kColMajor) {
    const bool row = rule == StrideRule::kRowMajor;
    int64_t want = 1;  // fits: the element count (checked) bounds the products
    for (int32_t k = 0; k < ndim; ++k) {
      const std::size_t i = static_cast<std::size_t>(row ? ndim - 1 - k : k);
      if (shape[i] > 1 && strides[i] != want) {
        refuse(i, std::string("needs ") + (row ? "C" : "Fortran") + "-contiguous strides (" +
                      std::to_string(want) + " here)");
      }
      want *= shape[i];
    }
  } else if (rule != StrideRule::kAny) {
    for (std::size_t i = 0; i < shape.size; ++i) {
      if (shape[i] > 1 && strides[i] < 0) refuse(i, "takes no negative strides");
      if (shape[i] > 1 && strides[i] == 0 && rule == StrideRule::kPositiveUnique) {
        refuse(i, "takes no zero strides (no broadcast dimensions)");
      }
    }
  }
  if (rule == StrideRule::kPositiveUnique) {
    // Unique: sorted by stride, each stride steps past all the dimension before it reaches.
    std::size_t order[TensorLayout::kMaxDims];
    std::size_t n = 0;
    for (std::size_t r = 0; r < shape.size; ++r) {
      if (shape[r] <= 1) continue;
      std::size_t at = n++;
      for (; at > 0 && strides[order[at - 1]] > strides[r]; --at) order[at] = order[at - 1];
      order[at] = r;
    }
    for (std::size_t i = 1; i < n; ++i) {
      const std::size_t prev = order[i - 1];
      int64_t past = 0;  // overflowing: past every int64 stride, so an overlap too
      if (CheckedMul(strides[prev], shape[prev], &past) || strides[order[i]] < past) {
        refuse(order[i], "needs dimensions that do not overlap (it steps inside dimension " +
                             std::to_string(prev) + ")");
      }
    }
  }
}
}  // namespace internal

/// Checks `layout`'s strides against `rule` (`exact`: the ndim strides of StrideRule::kExact),
/// throwing Error(kInvalidStrides) through `site`, naming the stride, the layout and what
/// `view` (the framework's view, for the message) needs. Dimensions of extent 0 or 1, and
/// every dimension of a layout without elements, take any stride. Throws Error(kOverflow) for
/// an element count past int64. CheckView calls it; a bridge whose view computes its strides
/// only after other checks (mdspan's mapping) calls it itself.
inline void CheckStrides(const TensorLayout& layout, StrideRule rule, const int64_t* exact,
                         const char* view, const Site& site) {
  internal::CheckCountedStrides(layout, ElementCountOf(layout, site), rule, exact, view, site);
}

/// Checks `tensor` for a framework's view before anything is built or moved, in this order,
/// throwing Error through `site` with the layout named: kInvalidShape (ndim outside
/// [min_ndim, max_ndim]); kInvalidDtype (not `needs.dtype`); kReadOnly (a read-only tensor
/// and a view that writes); kOverflow (a span past int64, see KIT-2); kInvalidStrides (a
/// stride the rule refuses, see KIT-4);
/// kUnsupportedDevice (memory the CPU cannot read, see HLP-4, unless `needs.any_device`);
/// kInvalidArgument (element zero not aligned). Borrows `tensor`; takes nothing.
// KIT-3: every view check of every bridge, in one order: shape, dtype, read-only, span,
// strides, device, alignment.
inline CheckedView CheckView(const Tensor& tensor, const ViewNeeds& needs, const Site& site) {
  const TensorLayout& layout = tensor.layout;
  const int32_t ndim = layout.Ndim();
  const IndexSpan shape = layout.Shape();
  const IndexSpan strides = layout.Strides();
  if (ndim < needs.min_ndim || ndim > needs.max_ndim) {
    const std::string range =
        needs.min_ndim == needs.max_ndim
            ? std::to_string(needs.min_ndim)
            : std::to_string(needs.min_ndim) + " to " + std::to_string(needs.max_ndim);
    site.Fail(ErrorCode::kInvalidShape, "the tensor has ndim " + std::to_string(ndim) + " (" +
                                            LayoutText(layout) + "); " + needs.view +
                                            " takes ndim " + range + ": reshape or slice it first");
  }
  if (needs.dtype.bits != 0 && !SameDataType(layout.Dtype(), needs.dtype)) {
    site.Fail(ErrorCode::kInvalidDtype, "the tensor's dtype is " + DtypeText(layout.Dtype()) +
                                            " but " + needs.view + " reads " +
                                            DtypeText(needs.dtype));
  }
  if (needs.writes && (tensor.flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0) {
    site.Fail(ErrorCode::kReadOnly,
              std::string("the tensor is read-only "
                          "(DLPACK_FLAG_BITMASK_READ_ONLY) and ") +
                  needs.view + " would let its user write to it: " + needs.read_only_advice);
  }
  CheckedView checked;
  checked.elements = ElementCountOf(layout, site);  // kOverflow past int64
  const int64_t itemBytes = (int64_t{layout.Dtype().bits} * layout.Dtype().lanes + 7) / 8;
  checked.reach = ReachOf(ndim, shape.data, strides.data, itemBytes, site);
  internal::CheckCountedStrides(layout, checked.elements, needs.strides, needs.exact_strides,
                                needs.view, site);
  if (needs.any_device) {
    // Unsigned: an address plus an offset wraps as addresses do, never as signed overflow.
    const uint64_t zero =
        static_cast<uint64_t>(tensor.descriptor.GetPointer()) + layout.ByteOffset();
    checked.data = reinterpret_cast<void*>(static_cast<uintptr_t>(zero));
  } else {
    // The host rule's own check (see HLP-4; the dtype was checked above), with this bridge's site
    // as the prefix.
    const std::string problem = detail::HostReadProblem(tensor);
    if (!problem.empty()) site.Fail(ErrorCode::kUnsupportedDevice, problem);
    checked.data = detail::CheckedElementZero(tensor, layout.Dtype());
  }
  const std::size_t alignment =
      needs.alignment != 0 ? needs.alignment : static_cast<std::size_t>(itemBytes);
  if (alignment > 1 && reinterpret_cast<uintptr_t>(checked.data) % alignment != 0) {
    site.Fail(ErrorCode::kInvalidArgument,
              "element zero (byte offset " + std::to_string(layout.ByteOffset()) +
                  ") is not aligned to " + std::to_string(alignment) + " bytes, and " + needs.view +
                  " reads whole values: copy the tensor first (CopyToHost)");
  }
  return checked;
}

}  // namespace kit
}  // namespace dlbridge
