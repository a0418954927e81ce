// Host tensors (include/dlbridge/host_copy.h): allocation and the strided copy.
#include "dlbridge/host_copy.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "copies/host_copy_internal.h"
#include "core/error_internal.h"
#include "dlbridge/dtype.h"
#include "dlpack/checked_math_internal.h"
#include "dlpack/dlpack_rules.h"

namespace dlbridge {
namespace {

using detail::Fail;

// Copies the strided elements of `from` (element zero at `base`) in C order to `out`.
void CopyStrided(const unsigned char* base, const DLTensor& from, size_t item,
                 unsigned char* out) noexcept {
  if (from.ndim == 0) {
    std::memcpy(out, base, item);
    return;
  }
  int64_t index[TensorLayout::kMaxDims] = {};
  const int32_t last = from.ndim - 1;
  const auto step = static_cast<int64_t>(item);
  const size_t row = item * static_cast<size_t>(from.shape[last]);
  for (;;) {
    int64_t offset = 0;
    for (int32_t i = 0; i < last; ++i) offset += index[i] * from.strides[i];
    const unsigned char* in = base + offset * step;
    if (from.strides[last] == 1) {
      std::memcpy(out, in, row);
      out += row;
    } else {
      for (int64_t j = 0; j < from.shape[last]; ++j) {
        std::memcpy(out, in + j * from.strides[last] * step, item);
        out += item;
      }
    }
    int32_t dim = last - 1;
    while (dim >= 0 && ++index[dim] == from.shape[dim]) index[dim--] = 0;
    if (dim < 0) return;
  }
}

// Bit i of the bytes at `base` (i may be negative: bits before base).
bool ReadBit(const unsigned char* base, int64_t i) noexcept {
  const int64_t byte = i >= 0 ? i / 8 : -((-i + 7) / 8);  // floor(i / 8)
  return (base[byte] >> (i - byte * 8)) & 1;
}

void WriteBit(unsigned char* out, int64_t i, bool bit) noexcept {
  if (bit) {
    out[i / 8] = static_cast<unsigned char>(out[i / 8] | (1u << (i % 8)));
  } else {
    out[i / 8] = static_cast<unsigned char>(out[i / 8] & ~(1u << (i % 8)));
  }
}

// Copies sub-byte elements of `from` (element zero at bit 0 of `base`; element k of a
// stride-walk `step` bits further per element: the element's bits when packed, whole bytes
// when padded) in C order, packed, to `out` (little bit-endian: CH-35).
void CopyBits(const unsigned char* base, const DLTensor& from, int64_t elementBits, int64_t step,
              unsigned char* out) noexcept {
  int64_t index[TensorLayout::kMaxDims] = {};
  int64_t written = 0;
  for (;;) {
    int64_t offset = 0;
    for (int32_t i = 0; i < from.ndim; ++i) offset += index[i] * from.strides[i];
    for (int64_t b = 0; b < elementBits; ++b) {
      WriteBit(out, written + b, ReadBit(base, offset * step + b));
    }
    written += elementBits;
    int32_t dim = from.ndim - 1;
    while (dim >= 0 && ++index[dim] == from.shape[dim]) index[dim--] = 0;
    if (dim < 0) return;
  }
}

// The bytes `count` elements of `elementBits` each take when packed (whole bytes: exactly),
// or false when that passes int64. Split so that no intermediate passes the result.
bool PackedBytes(int64_t count, int64_t elementBits, int64_t* bytes) noexcept {
  if (elementBits % 8 == 0) return detail::MulOverflows(count, elementBits / 8, bytes);
  int64_t whole = 0;  // 8 elements take exactly elementBits bytes
  if (detail::MulOverflows(count / 8, elementBits, &whole)) return true;
  const int64_t rest = (count % 8 * elementBits + 7) / 8;
  return detail::AddOverflows(whole, rest, bytes);
}

}  // namespace

int64_t detail::PackedSizeOrThrow(const char* where, DLDataType dtype, int32_t ndim,
                                  const int64_t* shape) {
  detail::CheckDtypeOrThrow(where, dtype);
  (void)TensorLayout::FromArrays(dtype, ndim, shape, nullptr);  // the shape's own checks
  int64_t count = 1;
  for (int32_t i = 0; i < ndim && count != 0; ++i) {
    if (shape[i] == 0) count = 0;
  }
  for (int32_t i = 0; i < ndim && count != 0; ++i) {
    if (detail::MulOverflows(count, shape[i], &count)) {
      Fail(ErrorCode::kOverflow, std::string(where) +
                                     ": the element count overflows int64 at shape[" +
                                     std::to_string(i) + "] = " + std::to_string(shape[i]));
    }
  }
  const int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;  // at most 255 * 65535
  int64_t bytes = 0;
  if (PackedBytes(count, elementBits, &bytes)) {
    Fail(ErrorCode::kOverflow, std::string(where) + ": " + std::to_string(count) + " elements of " +
                                   DtypeName(dtype) + " (" + std::to_string(elementBits) +
                                   " bits each) take more than INT64_MAX bytes; the shape or "
                                   "dtype.lanes is too large");
  }
  return bytes;
}

// HC-1: C-contiguous, in an aligned block (see CPY-6), held by a release that frees it. Every
// size is checked: a size past int64 names the extent or the dtype that made it so.
Tensor AllocateHostTensor(DLDataType dtype, int32_t ndim, const int64_t* shape) {
  const int64_t bytes = detail::PackedSizeOrThrow("AllocateHostTensor", dtype, ndim, shape);
  TensorLayout layout = TensorLayout::FromArrays(dtype, ndim, shape, nullptr);
  void* block = static_cast<uint64_t>(bytes) <= SIZE_MAX
                    ? detail::AllocateAligned(static_cast<size_t>(bytes))
                    : nullptr;
  if (block == nullptr) {
    Fail(ErrorCode::kOutOfMemory,
         "AllocateHostTensor: could not allocate " + std::to_string(bytes) + " bytes");
  }
  Tensor t;
  t.descriptor.SetRelease(&detail::FreeAligned, block);  // holds the block from here on
  t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(block)), bytes, "host");
  t.layout = std::move(layout);
  t.device = DLDevice{kDLCPU, 0};
  return t;
}

namespace detail {

// CPY-6: every buffer dlbridge allocates starts on a 256-byte boundary; the raw block's
// address is kept just below the aligned one.
void* AllocateAligned(size_t bytes) noexcept {
  constexpr size_t kExtra = kAllocationAlignment + sizeof(void*);
  if (bytes > SIZE_MAX - kExtra) return nullptr;
  void* raw = std::malloc(bytes + kExtra);
  if (raw == nullptr) return nullptr;
  const uintptr_t first = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
  const uintptr_t aligned = (first + kAllocationAlignment - 1) & ~(kAllocationAlignment - 1);
  void** slot = reinterpret_cast<void**>(aligned) - 1;
  *slot = raw;
  return reinterpret_cast<void*>(aligned);
}

void FreeAligned(void* block) noexcept {
  if (block != nullptr) std::free(*(static_cast<void**>(block) - 1));
}

void CopyHostElements(const DLTensor& from, uint64_t flags, bool contiguous, unsigned char* out,
                      int64_t bytes) noexcept {
  if (bytes <= 0) return;
  const int64_t elementBits = int64_t{from.dtype.bits} * from.dtype.lanes;
  const auto* base = static_cast<const unsigned char*>(from.data) + from.byte_offset;
  if (elementBits % 8 != 0) {  // HC-4: sub-byte elements move bit by bit, packed
    const bool packed = IsPackedSubByte(from.dtype, flags);
    std::memset(out, 0, static_cast<size_t>(bytes));  // the tail
    CopyBits(base, from, elementBits, packed ? elementBits : (elementBits + 7) / 8 * 8, out);
  } else if (contiguous) {
    std::memcpy(out, base, static_cast<size_t>(bytes));
  } else {
    CopyStrided(base, from, static_cast<size_t>(elementBits / 8), out);
  }
}

}  // namespace detail

}  // namespace dlbridge
