// TensorLayout storage and the layout arithmetic shared by export and import.
#include "dlbridge/tensor_layout.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "dlbridge/error.h"
#include "error_internal.h"
#include "layout_internal.h"

namespace dlbridge {
namespace detail {

uint64_t KnownFlags() noexcept {
  uint64_t known = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  known |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
#endif
  return known;
}

namespace {

struct DtypeRow {
  uint8_t code;
  const char* name;
  uint8_t bits[4];  // accepted widths, 0-terminated
};

// Codes as numbers so the table compiles against any 1.x header; the float8/6/4 codes
// arrived with DLPack 1.1 and are known only when the header is at least that.
constexpr DtypeRow kDtypes[] = {
    {0, "int", {8, 16, 32, 64}},
    {1, "uint", {8, 16, 32, 64}},
    {2, "float", {16, 32, 64, 0}},
    {3, "opaque_handle", {8, 16, 32, 64}},
    {4, "bfloat", {16, 0, 0, 0}},
    {5, "complex", {64, 128, 0, 0}},
    {6, "bool", {8, 0, 0, 0}},
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
    {7, "float8_e3m4", {8, 0, 0, 0}},
    {8, "float8_e4m3", {8, 0, 0, 0}},
    {9, "float8_e4m3b11fnuz", {8, 0, 0, 0}},
    {10, "float8_e4m3fn", {8, 0, 0, 0}},
    {11, "float8_e4m3fnuz", {8, 0, 0, 0}},
    {12, "float8_e5m2", {8, 0, 0, 0}},
    {13, "float8_e5m2fnuz", {8, 0, 0, 0}},
    {14, "float8_e8m0fnu", {8, 0, 0, 0}},
    {15, "float6_e2m3fn", {6, 0, 0, 0}},
    {16, "float6_e3m2fn", {6, 0, 0, 0}},
    {17, "float4_e2m1fn", {4, 0, 0, 0}},
#endif
};

constexpr size_t kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);
constexpr bool RowsAreIndexedByCode() {
  for (size_t i = 0; i < kDtypeCount; ++i) {
    if (kDtypes[i].code != i) return false;
  }
  return true;
}
static_assert(RowsAreIndexedByCode(), "kDtypes[i] must describe code i: lookups index it");

// On every export and import: a direct index, not a search.
const DtypeRow* FindDtype(uint8_t code) { return code < kDtypeCount ? &kDtypes[code] : nullptr; }

std::string BitsList(const DtypeRow& row) {
  std::string out;
  for (uint8_t b : row.bits) {
    if (b == 0) break;
    if (!out.empty()) out += ", ";
    out += std::to_string(b);
  }
  return out;
}

}  // namespace

bool IsKnownDtypeCode(uint8_t code) noexcept { return FindDtype(code) != nullptr; }

std::string DtypeText(DLDataType dtype) {
  const DtypeRow* row = FindDtype(dtype.code);
  std::string text = row ? row->name : "code" + std::to_string(dtype.code);
  text += std::to_string(dtype.bits);
  if (dtype.lanes != 1) text += "x" + std::to_string(dtype.lanes);
  return text;
}

void CheckDtype(const char* where, DLDataType dtype) {
  const DtypeRow* row = FindDtype(dtype.code);
  if (row == nullptr) {
    Fail(ErrorCode::kInvalidDtype,
         std::string(where) + ": dtype.code " + std::to_string(dtype.code) +
             " is unknown to this build (DLPack " + std::to_string(DLPACK_MAJOR_VERSION) + "." +
             std::to_string(DLPACK_MINOR_VERSION) + "); accepted: 0.." +
             std::to_string(kDtypes[sizeof(kDtypes) / sizeof(kDtypes[0]) - 1].code));
  }
  if (dtype.lanes == 0) {
    Fail(ErrorCode::kInvalidDtype, std::string(where) + ": dtype.lanes is 0; lanes must be >= 1");
  }
  for (uint8_t b : row->bits) {
    if (b != 0 && b == dtype.bits) return;
  }
  Fail(ErrorCode::kInvalidDtype, std::string(where) + ": dtype.bits " + std::to_string(dtype.bits) +
                                     " does not match code " + std::to_string(dtype.code) + " (" +
                                     row->name + "); accepted bits: " + BitsList(*row));
}

bool IsPackedSubByte(DLDataType dtype, uint64_t flags) noexcept {
  int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;
  if (elementBits % 8 == 0) return false;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  if (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) return false;
#else
  (void)flags;
#endif
  return true;
}

ByteSpan ComputeSpan(const char* where, DLDataType dtype, uint64_t flags, int32_t ndim,
                     const int64_t* shape, const int64_t* strides) {
  ByteSpan span;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) return span;  // no elements: nothing is reached, nothing can overflow
  }
  int64_t count = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (MulOverflows(count, shape[i], &count)) {
      Fail(ErrorCode::kOverflow, std::string(where) +
                                     ": the element count overflows int64 at shape[" +
                                     std::to_string(i) + "] = " + std::to_string(shape[i]));
    }
  }
  span.count = count;
  if (count == 0) return span;

  // Lowest and highest element offsets reachable, in elements from element zero.
  int64_t lo = 0;
  int64_t hi = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    int64_t reach = 0;
    if (MulOverflows(strides[i], shape[i] - 1, &reach) ||
        AddOverflows(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      Fail(ErrorCode::kOverflow, std::string(where) + ": strides[" + std::to_string(i) +
                                     "] = " + std::to_string(strides[i]) + " with shape[" +
                                     std::to_string(i) + "] = " + std::to_string(shape[i]) +
                                     " reaches past int64");
    }
  }
  int64_t elements = 0;
  // elements - lo, not elements + -lo: lo may be INT64_MIN, whose negation overflows.
  if (AddOverflows(hi - 0, 1, &elements) || __builtin_sub_overflow(elements, lo, &elements)) {
    Fail(ErrorCode::kOverflow, std::string(where) + ": the layout's extent overflows int64");
  }
  const int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;
  if (IsPackedSubByte(dtype, flags)) {
    int64_t lowBits = 0;
    int64_t bits = 0;
    if (MulOverflows(lo, elementBits, &lowBits) || MulOverflows(elements, elementBits, &bits)) {
      Fail(ErrorCode::kOverflow,
           std::string(where) + ": the layout's extent in bits overflows int64");
    }
    if (lowBits % 8 != 0) {
      Fail(ErrorCode::kInvalidStrides,
           std::string(where) + ": with packed " + DtypeText(dtype) +
               " elements the lowest reachable element does not start on a byte boundary");
    }
    span.low = lowBits / 8;
    span.bytes = bits / 8 + (bits % 8 != 0);
    return span;
  }
  const int64_t itemBytes = (elementBits + 7) / 8;
  if (MulOverflows(lo, itemBytes, &span.low) || MulOverflows(elements, itemBytes, &span.bytes)) {
    Fail(ErrorCode::kOverflow,
         std::string(where) + ": the layout's extent in bytes overflows int64");
  }
  return span;
}

}  // namespace detail

TensorLayout::TensorLayout() noexcept : dtype_{kDLFloat, 32, 1}, dims_(inline_) {}

TensorLayout::TensorLayout(DLDataType dtype, std::vector<int64_t> shape,
                           std::vector<int64_t> strides, uint64_t byteOffset)
    : dtype_(dtype), byteOffset_(byteOffset), dims_(inline_) {
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
  int64_t* dims = inline_;
  if (ndim > kInlineDims) {
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
    // C-contiguous, extents saturated at 1. Only an empty tensor can get here with strides
    // past int64; they wrap (unsigned) and mean nothing, as no element is ever addressed.
    uint64_t step = 1;
    for (int32_t i = ndim - 1; i >= 0; --i) {
      dims[ndim + i] = static_cast<int64_t>(step);
      step *= static_cast<uint64_t>(shape[i] > 1 ? shape[i] : 1);
    }
  }
  Release();
  dims_ = dims;
  ndim_ = ndim;
}

void TensorLayout::Release() noexcept {
  if (dims_ != inline_) std::free(dims_);
  dims_ = inline_;
}

TensorLayout::~TensorLayout() { Release(); }

TensorLayout::TensorLayout(const TensorLayout& other)
    : dtype_(other.dtype_), byteOffset_(other.byteOffset_), dims_(inline_) {
  Assign(other.ndim_, other.dims_, other.dims_ + other.ndim_);
}

TensorLayout& TensorLayout::operator=(const TensorLayout& other) {
  if (this != &other) {
    Assign(other.ndim_, other.dims_, other.dims_ + other.ndim_);
    dtype_ = other.dtype_;
    byteOffset_ = other.byteOffset_;
  }
  return *this;
}

TensorLayout::TensorLayout(TensorLayout&& other) noexcept
    : dtype_(other.dtype_), ndim_(other.ndim_), byteOffset_(other.byteOffset_), dims_(inline_) {
  if (other.dims_ != other.inline_) {
    dims_ = other.dims_;
    other.dims_ = other.inline_;
  } else {
    std::memcpy(inline_, other.inline_, sizeof(int64_t) * 2 * static_cast<size_t>(ndim_));
  }
  other.ndim_ = 0;
}

TensorLayout& TensorLayout::operator=(TensorLayout&& other) noexcept {
  if (this != &other) {
    Release();
    dtype_ = other.dtype_;
    ndim_ = other.ndim_;
    byteOffset_ = other.byteOffset_;
    if (other.dims_ != other.inline_) {
      dims_ = other.dims_;
      other.dims_ = other.inline_;
    } else {
      std::memcpy(inline_, other.inline_, sizeof(int64_t) * 2 * static_cast<size_t>(ndim_));
    }
    other.ndim_ = 0;
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
