// Shared by the fuzz targets: a byte reader that never reads past its input, the harness's
// checks (which abort, so libFuzzer and the replay runs report them as crashes), and an
// independent 128-bit computation of the bytes a layout reaches.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "dlbridge/dlbridge.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLB_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(DLB_FUZZ_ASAN)
#define DLB_FUZZ_ASAN 1
#endif
#if defined(DLB_FUZZ_ASAN)
#include <sanitizer/asan_interface.h>
#define DLB_FUZZ_POISON(p, n) __asan_poison_memory_region((p), (n))
#define DLB_FUZZ_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define DLB_FUZZ_POISON(p, n) ((void)(p), (void)(n))
#define DLB_FUZZ_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/// A harness invariant: on failure print where and abort (a crash for libFuzzer and replay).
#define FUZZ_CHECK(cond)                                                                    \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: harness check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

namespace dlbfuzz {

__extension__ typedef __int128 i128;

/// Reads the fuzzer's bytes front to back; past the end every read yields zeros.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool Bit() { return (Byte() & 1) != 0; }
  /// The next sizeof(T) bytes as a T; bytes past the end read as zero. One bounded memcpy
  /// (a byte loop here gave g++ 12 -O3 a false -Wstringop-overflow).
  template <class T>
  T Raw() {
    unsigned char bytes[sizeof(T)] = {};
    const size_t left = size_ - pos_;
    const size_t take = left < sizeof(T) ? left : sizeof(T);
    if (take != 0) std::memcpy(bytes, data_ + pos_, take);
    pos_ += take;
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }
  /// Mostly small values, sometimes boundaries, powers of two or raw bits.
  int64_t Int64() {
    static constexpr int64_t kEdges[] = {0,
                                         1,
                                         -1,
                                         std::numeric_limits<int64_t>::max(),
                                         std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max() / 2,
                                         std::numeric_limits<int64_t>::max() / 3,
                                         int64_t{1} << 31,
                                         int64_t{1} << 32,
                                         int64_t{1} << 62,
                                         -(int64_t{1} << 62),
                                         4096,
                                         4097};
    const uint8_t selector = Byte();
    switch (selector & 7) {
      case 0:
      case 1:
      case 2: return static_cast<int8_t>(Byte());
      case 3: return Byte();
      case 4: return Raw<int64_t>();
      case 5: return kEdges[Byte() % (sizeof(kEdges) / sizeof(kEdges[0]))];
      case 6: {
        const int64_t power = int64_t{1} << (Byte() % 63);
        return (selector & 8) ? -power : power;
      }
      default: return Byte() % 9;
    }
  }
  /// A non-negative extent: mostly 0..8.
  int64_t Extent() {
    const uint8_t selector = Byte();
    if (selector < 224) return selector % 9;
    return Int64();
  }
  size_t Remaining() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

/// The bytes a layout reaches relative to element zero, computed without overflow.
struct Span {
  i128 count = 0;
  i128 low = 0;    ///< <= 0
  i128 bytes = 0;  ///< from the lowest to one past the highest reachable byte
};

inline Span ComputeSpan(DLDataType dtype, uint64_t flags, int32_t ndim, const int64_t* shape,
                        const int64_t* strides) {
  Span span;
  i128 count = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    count *= shape[i];
    if (count > (i128{1} << 64)) count = i128{1} << 64;  // saturate: already past int64
  }
  span.count = count;
  if (count == 0) return span;
  i128 lo = 0;
  i128 hi = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    const i128 reach = i128{strides[i]} * (i128{shape[i]} - 1);
    if (reach < 0)
      lo += reach;
    else
      hi += reach;
  }
  const i128 elements = hi - lo + 1;
  const i128 elementBits = i128{dtype.bits} * dtype.lanes;
  const bool padded = (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  if (elementBits % 8 != 0 && !padded) {
    span.low = (lo * elementBits) / 8;  // exact when accepted (byte-aligned lowest element)
    const i128 bits = elements * elementBits;
    span.bytes = bits / 8 + (bits % 8 != 0);
  } else {
    const i128 item = (elementBits + 7) / 8;
    span.low = lo * item;
    span.bytes = elements * item;
  }
  return span;
}

/// A release that counts its calls.
struct ReleaseCount {
  int calls = 0;
  static void Release(void* context) { ++static_cast<ReleaseCount*>(context)->calls; }
};

/// The ledger's live counts must come back to where an input started.
struct LedgerBaseline {
  dlbridge::LedgerCounts start = dlbridge::GetLedgerCounts();
  void Check() const {
    const dlbridge::LedgerCounts now = dlbridge::GetLedgerCounts();
    FUZZ_CHECK(now.descriptor_holds == start.descriptor_holds);
    FUZZ_CHECK(now.exports == start.exports);
    FUZZ_CHECK(now.double_deletes == start.double_deletes);
  }
};

/// Checks a dlbridge export against the descriptor it came from: the reachable bytes lie in
/// [pointer, pointer + size), shape and strides are the layout's, strides always present.
inline void CheckExportedInside(const DLTensor& t, const dlbridge::TensorLayout& layout,
                                uint64_t flags, int64_t pointer, int64_t size) {
  FUZZ_CHECK(t.ndim == layout.Ndim());
  FUZZ_CHECK(t.dtype.code == layout.Dtype().code && t.dtype.bits == layout.Dtype().bits &&
             t.dtype.lanes == layout.Dtype().lanes);
  if (t.ndim > 0) {
    FUZZ_CHECK(t.shape != nullptr && t.strides != nullptr);
    const size_t n = static_cast<size_t>(t.ndim) * sizeof(int64_t);
    FUZZ_CHECK(std::memcmp(t.shape, layout.Shape().data, n) == 0);
    FUZZ_CHECK(std::memcmp(t.strides, layout.Strides().data, n) == 0);
  } else {
    FUZZ_CHECK(t.shape == nullptr && t.strides == nullptr);
  }
  const Span span = ComputeSpan(t.dtype, flags, t.ndim, t.shape, t.strides);
  if (span.count == 0) {
    FUZZ_CHECK(t.data == nullptr && t.byte_offset == 0);
    return;
  }
  // Element zero is where the layout puts it (EXP-17: in data, with byte_offset 0). Read the
  // address unsigned: with negative strides element zero may lie past 2^63 while the first
  // reachable byte (all that EXP-18 bounds) lies below it.
  const i128 elementZero = i128{reinterpret_cast<uintptr_t>(t.data)} + t.byte_offset;
  FUZZ_CHECK(elementZero == i128{pointer} + layout.ByteOffset());
  const i128 start = elementZero + span.low;
  const i128 end = start + span.bytes;
  FUZZ_CHECK(start >= pointer);
  FUZZ_CHECK(end <= i128{pointer} + size);
}

}  // namespace dlbfuzz
