/// @file
/// TensorLayout: how elements sit in a descriptor's buffer (dtype, shape, strides, offset).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"

namespace dlbridge {
namespace detail {
struct LayoutAccess;  // lets import fill a layout it has already validated, in place
}  // namespace detail

namespace detail {
// The element type of a sized range (what iterating it yields), or void. Elements are read
// through begin(), never through data(): an Eigen row of a column-major matrix has data()
// and size() but its elements are a stride apart.
template <class R, class = void>
struct RangeElement {
  using type = void;
};
template <class R>
struct RangeElement<R, std::void_t<decltype(*std::begin(std::declval<const R&>())),
                                   decltype(std::size(std::declval<const R&>()))>> {
  using type =
      std::remove_cv_t<std::remove_reference_t<decltype(*std::begin(std::declval<const R&>()))>>;
};
// An index is an integer of at most 64 bits, not bool and not a character type.
template <class I>
inline constexpr bool kIsIndexType = std::is_integral_v<I> && sizeof(I) <= 8 &&
                                     !std::is_same_v<I, bool> && !std::is_same_v<I, char> &&
                                     !std::is_same_v<I, wchar_t> && !std::is_same_v<I, char16_t> &&
                                     !std::is_same_v<I, char32_t>;
// A sized range of indices: std::vector<size_t>, std::array<int, N>, int[N], an
// initializer list, an Eigen index vector or a strided block of one...
template <class R>
inline constexpr bool kIsIndexRange = kIsIndexType<typename RangeElement<R>::type>;
}  // namespace detail

/// A read-only view of ndim int64 values (shape or strides).
struct IndexSpan {
  /// The first value.
  const int64_t* data = nullptr;
  /// How many values there are (ndim).
  size_t size = 0;
  /// The first value, for range-for.
  const int64_t* begin() const noexcept { return data; }
  /// One past the last value.
  const int64_t* end() const noexcept { return data + size; }
  /// The value at index `i`, which must be below `size` (not checked).
  int64_t operator[](size_t i) const noexcept { return data[i]; }
};

/// Dtype, shape, strides in elements and the byte offset of element zero from the
/// descriptor's pointer. Up to kInlineDims dimensions are stored inline, so layouts of
/// ordinary tensors (and every import of ndim <= 8) need no heap allocation.
class DLBRIDGE_API TensorLayout {
 public:
  /// Layouts of up to this many dimensions are stored inline (no heap allocation).
  static constexpr int32_t kInlineDims = 8;
  static constexpr int32_t kMaxDims = 64;  ///< The most dimensions dlbridge accepts.

  /// A 0-d layout of one float32 element (LAY-1). Inline: a few stores.
  TensorLayout() noexcept
      : dtype_{kDLFloat, 32, 1},
        ndim_(0),
        byteOffset_(0),
        dims_(inline_),
        spanCount_(0),
        spanLow_(0),
        spanBytes_(-1) {}
  /// A layout of `shape`, with `strides` in elements and element zero `byteOffset` bytes from
  /// the descriptor's pointer. Empty `strides` means C-contiguous. Throws Error when ndim >
  /// kMaxDims, an extent is negative, strides and shape differ in length, or contiguous
  /// strides overflow.
  TensorLayout(DLDataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
               uint64_t byteOffset = 0);
  /// The same from any sized ranges of any integer type of up to 64 bits (a
  /// std::vector<size_t>, a std::array<int, N>, a C array, an Eigen index vector or a strided
  /// row of an Eigen matrix; elements are read by iterating, never through data()), converted
  /// to int64 without narrowing: a value past INT64_MAX (an unsigned one) throws
  /// Error(kOverflow) naming the field and its index; then the checks of the constructor above.
  /// An empty `strides` (the default) means C-contiguous. A braced list for `strides` is read
  /// as int64 values.
  // HLP-6: any integer range, each value checked on its way to int64.
  template <class ShapeRange, class StridesRange = std::initializer_list<int64_t>,
            class = std::enable_if_t<detail::kIsIndexRange<ShapeRange> &&
                                     detail::kIsIndexRange<StridesRange>>>
  TensorLayout(DLDataType dtype, const ShapeRange& shape, const StridesRange& strides = {},
               uint64_t byteOffset = 0)
      : TensorLayout(FromRanges(dtype, shape, strides, byteOffset)) {}

  /// The same from plain arrays; `strides` null means C-contiguous.
  static TensorLayout FromArrays(DLDataType dtype, int32_t ndim, const int64_t* shape,
                                 const int64_t* strides, uint64_t byteOffset = 0);

  /// Frees the heap block of a layout with more than kInlineDims dimensions. Inline: the
  /// common layout has none, and dropping it costs one comparison.
  ~TensorLayout() {
    if (dims_ != inline_) std::free(dims_);
  }
  /// Copies `other`. Past kInlineDims dimensions this allocates, and throws
  /// Error(kOutOfMemory) when it cannot (assignment then leaves this layout unchanged).
  TensorLayout(const TensorLayout& other);
  /// Copies `other`; see the copy constructor.
  TensorLayout& operator=(const TensorLayout& other);
  /// Takes `other`'s dimensions without allocating; `other` is left with ndim 0.
  TensorLayout(TensorLayout&& other) noexcept;
  /// Takes `other`'s layout without allocating; `other` is left with ndim 0.
  TensorLayout& operator=(TensorLayout&& other) noexcept;

  /// The element type.
  DLDataType Dtype() const noexcept { return dtype_; }
  /// The number of dimensions, 0..kMaxDims.
  int32_t Ndim() const noexcept { return ndim_; }
  /// The extents, Ndim() values. The span points into this layout: valid while it lives
  /// unchanged.
  IndexSpan Shape() const noexcept { return {dims_, static_cast<size_t>(ndim_)}; }
  /// The strides in elements, Ndim() values; always filled (the C-contiguous ones when the
  /// layout was made without strides). Valid as long as Shape().
  IndexSpan Strides() const noexcept { return {dims_ + ndim_, static_cast<size_t>(ndim_)}; }
  /// Bytes from the descriptor's pointer to element zero.
  uint64_t ByteOffset() const noexcept { return byteOffset_; }
  /// Sets ByteOffset(); not validated here.
  void SetByteOffset(uint64_t byteOffset) noexcept { byteOffset_ = byteOffset; }

  /// Product of the extents (1 for 0-d). Throws Error(kOverflow) past int64.
  int64_t ElementCount() const;
  /// Whether the strides are the C-contiguous ones for this shape (extent-1 dims ignored).
  bool IsContiguous() const noexcept;

  /// Whether dtype (code, bits and lanes), shape, strides and byte offset are all equal.
  bool operator==(const TensorLayout& other) const noexcept;
  /// The negation of operator==.
  bool operator!=(const TensorLayout& other) const noexcept { return !(*this == other); }

 private:
  friend struct detail::LayoutAccess;
  template <class ShapeRange, class StridesRange>
  static TensorLayout FromRanges(DLDataType dtype, const ShapeRange& shape,
                                 const StridesRange& strides, uint64_t byteOffset) {
    const auto ndim = static_cast<size_t>(std::size(shape));
    const auto nstrides = static_cast<size_t>(std::size(strides));
    CheckRangeSizes(ndim, nstrides);  // so that ndim <= kMaxDims below
    int64_t values[2 * kMaxDims];
    ToIndices(std::begin(shape), ndim, "shape", values);
    ToIndices(std::begin(strides), nstrides, "strides", values + ndim);
    return FromArrays(dtype, static_cast<int32_t>(ndim), values,
                      nstrides == 0 ? nullptr : values + ndim, byteOffset);
  }
  template <class It>
  static void ToIndices(It in, size_t count, const char* field, int64_t* out) {
    using I = std::remove_cv_t<std::remove_reference_t<decltype(*in)>>;
    for (size_t i = 0; i < count; ++i, ++in) {
      const I value = *in;
      if constexpr (std::is_unsigned_v<I> && sizeof(I) >= sizeof(int64_t)) {
        if (value > static_cast<I>(INT64_MAX)) FailIndexOverflow(field, i, value);
      }
      out[i] = static_cast<int64_t>(value);
    }
  }
  // The vector constructor's length checks (strides per dimension, ndim <= kMaxDims).
  static void CheckRangeSizes(size_t ndim, size_t nstrides);
  [[noreturn]] static void FailIndexOverflow(const char* field, size_t index, uint64_t value);
  // Checks (extents >= 0, contiguous strides fit int64), then Fill: LAY-4, LAY-5.
  void Assign(int32_t ndim, const int64_t* shape, const int64_t* strides);
  // Writes without checking; the importer calls it after the rules passed (one pass).
  void Fill(int32_t ndim, const int64_t* shape, const int64_t* strides);
  void Release() noexcept;
  // Takes other's dimensions (heap block or inline copy); this holds no heap block.
  void TakeFrom(TensorLayout& other) noexcept;

  // Keeps the span of dtype, shape and strides (the converters' one pass, FastSpan in
  // src/dlpack/checked_math_internal.h) once the layout is built, so that export and re-export do
  // not walk the dimensions again.
  void KeepSpan() noexcept;

  // An import's result (detail::LayoutAccess::Unfilled): its inline storage and ndim 0 (so
  // that even a move of it, which none makes, copies no dimensions), the rest unwritten until
  // the importer writes it, so that a fast import stores each field once.
  struct Unfilled {};
  explicit TensorLayout(Unfilled) noexcept : ndim_(0), dims_(inline_) {}  // NOLINT: see Unfilled

  // Every constructor but Unfilled's writes each field.
  DLDataType dtype_;
  int32_t ndim_;
  uint64_t byteOffset_;
  int64_t* dims_;  // shape then strides: inline_ or a heap block
  // What FastSpan gives for dtype_, shape and strides: element count, lowest reachable byte
  // from element zero, reachable bytes. spanBytes_ < 0: not known (FastSpan declined, or the
  // layout was not built through KeepSpan); the converters then ask the rules themselves.
  int64_t spanCount_;
  int64_t spanLow_;
  int64_t spanBytes_;
  int64_t inline_[2 * kInlineDims];
};

}  // namespace dlbridge
