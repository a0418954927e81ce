// TensorLayout: storage of a dtype, shape, strides and byte offset (LAY-*). The DLPack rules
// on layouts are dlpack_rules.cpp's.
#include "dlbridge/tensor_layout.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/error_internal.h"
#include "core/layout_internal.h"
#include "dlbridge/error.h"
#include "dlpack/checked_math_internal.h"

namespace dlbridge {

TensorLayout::TensorLayout(DLDataType dtype, std::vector<int64_t> shape,
                           std::vector<int64_t> strides, uint64_t byteOffset)
    : TensorLayout() {  // every field a new layout's first: see the default constructor
  dtype_ = dtype;
  byteOffset_ = byteOffset;
  if (!strides.empty() && strides.size() != shape.size()) {
    detail::Fail(ErrorCode::kInvalidStrides,
                 "TensorLayout: strides has " + std::to_string(strides.size()) +
                     " entries but shape has " + std::to_string(shape.size()) +
                     "; give one stride per dimension, or none for C-contiguous");
  }
  if (shape.size() > static_cast<size_t>(kMaxDims)) {
    detail::Fail(ErrorCode::kInvalidShape, "TensorLayout: ndim is " + std::to_string(shape.size()) +
                                               "; accepted: 0.." + std::to_string(kMaxDims));
  }
  Assign(static_cast<int32_t>(shape.size()), shape.data(),
         strides.empty() ? nullptr : strides.data());
}

void TensorLayout::CheckRangeSizes(size_t ndim, size_t nstrides) {
  if (nstrides != 0 && nstrides != ndim) {
    detail::Fail(ErrorCode::kInvalidStrides,
                 "TensorLayout: strides has " + std::to_string(nstrides) +
                     " entries but shape has " + std::to_string(ndim) +
                     "; give one stride per dimension, or none for C-contiguous");
  }
  if (ndim > static_cast<size_t>(kMaxDims)) {
    detail::Fail(ErrorCode::kInvalidShape, "TensorLayout: ndim is " + std::to_string(ndim) +
                                               "; accepted: 0.." + std::to_string(kMaxDims));
  }
}

// HLP-9: an unsigned value past INT64_MAX is refused, never wrapped to a negative one.
void TensorLayout::FailIndexOverflow(const char* field, size_t index, uint64_t value) {
  detail::Fail(ErrorCode::kOverflow, std::string("TensorLayout: ") + field + "[" +
                                         std::to_string(index) + "] is " + std::to_string(value) +
                                         ", past INT64_MAX; DLPack's " + field +
                                         " values are int64");
}

TensorLayout TensorLayout::FromArrays(DLDataType dtype, int32_t ndim, const int64_t* shape,
                                      const int64_t* strides, uint64_t byteOffset) {
  if (ndim < 0 || ndim > kMaxDims) {
    detail::Fail(ErrorCode::kInvalidShape, "TensorLayout: ndim is " + std::to_string(ndim) +
                                               "; accepted: 0.." + std::to_string(kMaxDims));
  }
  if (ndim > 0 && shape == nullptr) {
    detail::Fail(ErrorCode::kInvalidShape,
                 "TensorLayout: shape is null with ndim " + std::to_string(ndim));
  }
  TensorLayout layout;
  layout.dtype_ = dtype;
  layout.byteOffset_ = byteOffset;
  layout.Assign(ndim, shape, strides);
  return layout;
}

void TensorLayout::Assign(int32_t ndim, const int64_t* shape, const int64_t* strides) {
  // Every check runs before anything is written, so a throw leaves the layout as it was.
  bool empty = false;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] < 0) {
      detail::Fail(ErrorCode::kInvalidShape, "TensorLayout: shape[" + std::to_string(i) + "] is " +
                                                 std::to_string(shape[i]) +
                                                 "; extents must be >= 0");
    }
    empty = empty || shape[i] == 0;
  }
  if (strides == nullptr && !empty) {
    int64_t step = 1;
    for (int32_t i = ndim - 1; i > 0; --i) {
      if (detail::MulOverflows(step, shape[i] > 1 ? shape[i] : 1, &step)) {
        detail::Fail(ErrorCode::kOverflow,
                     "TensorLayout: contiguous strides overflow int64 at shape[" +
                         std::to_string(i) + "] = " + std::to_string(shape[i]));
      }
    }
  }
  Fill(ndim, shape, strides);
}

void TensorLayout::Fill(int32_t ndim, const int64_t* shape, const int64_t* strides) {
  int64_t* dims = inline_;
  if (ndim > kInlineDims) {  // LAY-3: up to kInlineDims inline, more on the heap
    dims = static_cast<int64_t*>(std::malloc(sizeof(int64_t) * 2 * static_cast<size_t>(ndim)));
    if (dims == nullptr) {
      detail::Fail(ErrorCode::kOutOfMemory,
                   "TensorLayout: could not allocate " + std::to_string(ndim) + " dimensions");
    }
  }
  if (ndim > 0) std::memcpy(dims, shape, sizeof(int64_t) * static_cast<size_t>(ndim));
  if (strides != nullptr) {
    if (ndim > 0) std::memcpy(dims + ndim, strides, sizeof(int64_t) * static_cast<size_t>(ndim));
  } else {
    // LAY-2: no strides mean C-contiguous, extents saturated at 1. Only an empty tensor can get
    // here with strides past int64; they wrap (unsigned) and mean nothing, as no element is ever
    // addressed.
    uint64_t step = 1;
    for (int32_t i = ndim - 1; i >= 0; --i) {
      dims[ndim + i] = static_cast<int64_t>(step);
      step *= static_cast<uint64_t>(shape[i] > 1 ? shape[i] : 1);
    }
  }
  Release();
  dims_ = dims;
  ndim_ = ndim;
  KeepSpan();
}

void TensorLayout::KeepSpan() noexcept {
  detail::ByteSpan span;
  if (detail::FastSpan(dtype_, ndim_, dims_, dims_ + ndim_, nullptr, &span)) {
    spanCount_ = span.count;
    spanLow_ = span.low;
    spanBytes_ = span.bytes;
  } else {
    spanBytes_ = -1;
  }
}

void TensorLayout::Release() noexcept {
  if (dims_ != inline_) std::free(dims_);
  dims_ = inline_;
}

TensorLayout::TensorLayout(const TensorLayout& other) : TensorLayout() {
  dtype_ = other.dtype_;
  byteOffset_ = other.byteOffset_;
  Assign(other.ndim_, other.dims_, other.dims_ + other.ndim_);
}

TensorLayout& TensorLayout::operator=(const TensorLayout& other) {
  // Copied first (it may throw, leaving this as it was), then moved in: the copy keeps the
  // span of other's dtype, computed once.
  if (this != &other) *this = TensorLayout(other);
  return *this;
}

void TensorLayout::TakeFrom(TensorLayout& other) noexcept {
  dtype_ = other.dtype_;
  ndim_ = other.ndim_;
  byteOffset_ = other.byteOffset_;
  spanCount_ = other.spanCount_;
  spanLow_ = other.spanLow_;
  spanBytes_ = other.spanBytes_;
  other.spanBytes_ = -1;  // other is left with ndim 0: its span is no longer known
  if (other.dims_ != other.inline_) {
    dims_ = other.dims_;
    other.dims_ = other.inline_;
  } else {
    dims_ = inline_;
    std::memcpy(inline_, other.inline_, sizeof(int64_t) * 2 * static_cast<size_t>(ndim_));
  }
  other.ndim_ = 0;
}

TensorLayout::TensorLayout(TensorLayout&& other) noexcept : dims_(inline_) { TakeFrom(other); }

TensorLayout& TensorLayout::operator=(TensorLayout&& other) noexcept {
  if (this != &other) {
    Release();
    TakeFrom(other);
  }
  return *this;
}

int64_t TensorLayout::ElementCount() const {
  for (int32_t i = 0; i < ndim_; ++i) {
    if (dims_[i] == 0) return 0;
  }
  int64_t count = 1;
  for (int32_t i = 0; i < ndim_; ++i) {
    if (detail::MulOverflows(count, dims_[i], &count)) {
      detail::Fail(ErrorCode::kOverflow, "TensorLayout: the element count overflows int64");
    }
  }
  return count;
}

bool TensorLayout::IsContiguous() const noexcept {
  int64_t step = 1;
  for (int32_t i = ndim_ - 1; i >= 0; --i) {
    if (dims_[i] == 0) return true;
    if (dims_[i] != 1 && dims_[ndim_ + i] != step) return false;
    if (detail::MulOverflows(step, dims_[i], &step)) return false;
  }
  return true;
}

bool TensorLayout::operator==(const TensorLayout& other) const noexcept {
  return dtype_.code == other.dtype_.code && dtype_.bits == other.dtype_.bits &&
         dtype_.lanes == other.dtype_.lanes && ndim_ == other.ndim_ &&
         byteOffset_ == other.byteOffset_ &&
         std::memcmp(dims_, other.dims_, sizeof(int64_t) * 2 * static_cast<size_t>(ndim_)) == 0;
}

}  // namespace dlbridge
