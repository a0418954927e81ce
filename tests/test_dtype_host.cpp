// Dtype names both ways and host tensors (spec/validation.md DT-*, HC-*).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "counting.h"
#include "dlbridge/dtype.h"
#include "dlbridge/host_copy.h"
#include "dlbridge/testing.h"

using dlbridge::DtypeName;
using dlbridge::ErrorCode;
using dlbridge::ParseDtype;
using dlbridge::Tensor;
using dlbridge::TensorLayout;
using namespace dlbtest;

namespace {

bool Same(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

const float* Floats(const Tensor& t) {
  return reinterpret_cast<const float*>(static_cast<intptr_t>(t.descriptor.GetPointer()));
}

// A host tensor over buf.bytes holding 0, 1, 2, ... as float32, with no hold.
Tensor Counting(Buffer& buf, TensorLayout layout, int64_t size = 4096) {
  auto* values = reinterpret_cast<float*>(buf.bytes);
  for (int i = 0; i < 1024; ++i) values[i] = static_cast<float>(i);
  Tensor t;
  t.descriptor.Set(buf.Address(), size, "host");
  t.layout = std::move(layout);
  return t;
}

}  // namespace

TEST_CASE("DT-1 DtypeName spells every accepted dtype as NumPy does, refused ones throw") {
  CHECK(DtypeName({kDLInt, 8, 1}) == "int8");
  CHECK(DtypeName({kDLUInt, 64, 1}) == "uint64");
  CHECK(DtypeName({kDLFloat, 32, 1}) == "float32");
  CHECK(DtypeName({kDLBfloat, 16, 1}) == "bfloat16");
  CHECK(DtypeName({kDLComplex, 128, 1}) == "complex128");
  CHECK(DtypeName({kDLOpaqueHandle, 64, 1}) == "opaque_handle64");
  CHECK(DtypeName({kDLBool, 8, 1}) == "bool");
  CHECK(DtypeName({kDLFloat, 32, 4}) == "float32x4");
  CHECK(DtypeName({kDLInt, 4, 1}) == "int4");  // the header's sub-byte integers
  CHECK(DtypeName({kDLUInt, 1, 1}) == "uint1");
  CHECK(DtypeName({kDLInt, 2, 1}) == "int2");
  CHECK(DtypeName({kDLUInt, 4, 2}) == "uint4x2");
  CHECK_DLB_ERROR(DtypeName({kDLInt, 3, 1}), ErrorCode::kInvalidDtype,
                  "accepted bits: 1, 2, 4, 8, 16, 32, 64");
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
  CHECK(DtypeName({kDLFloat8_e4m3fn, 8, 1}) == "float8_e4m3fn");
  CHECK(DtypeName({kDLFloat4_e2m1fn, 4, 2}) == "float4_e2m1fnx2");
#endif
  CHECK_DLB_ERROR(DtypeName({kDLFloat, 24, 1}), ErrorCode::kInvalidDtype,
                  "DtypeName: dtype.bits 24 does not match code 2 (float); accepted bits: 16, "
                  "32, 64");
  CHECK_DLB_ERROR(DtypeName({99, 8, 1}), ErrorCode::kUnsupportedDtype, "dtype.code 99 is unknown");
  CHECK_DLB_ERROR(DtypeName({kDLInt, 8, 0}), ErrorCode::kInvalidDtype, "lanes is 0");
}

TEST_CASE("DT-2 ParseDtype reads DtypeName's names back, and only those") {
  // Every accepted (code, bits) of the table (codes 0..17 today), with 1 and 3 lanes,
  // round-trips.
  std::set<std::string> names;
  for (int code = 0; code < 32; ++code) {
    for (int bits = 1; bits < 256; ++bits) {
      for (uint16_t lanes : {uint16_t{1}, uint16_t{3}}) {
        const DLDataType dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), lanes};
        std::string name;
        try {
          name = DtypeName(dtype);
        } catch (const dlbridge::Error&) {
          continue;
        }
        CAPTURE(name);
        CHECK(Same(ParseDtype(name), dtype));
        CHECK(names.insert(name).second);  // no two dtypes share a name
      }
    }
  }
  CHECK(names.count("complex64") == 1);
  CHECK(names.count("complex64x3") == 1);
  CHECK(names.size() >= 2 * 15);
  CHECK(Same(ParseDtype("uint8x65535"), {kDLUInt, 8, 65535}));
  CHECK(Same(ParseDtype("int4"), {kDLInt, 4, 1}));
  CHECK(Same(ParseDtype("uint2"), {kDLUInt, 2, 1}));
  CHECK(Same(ParseDtype("int1x8"), {kDLInt, 1, 8}));
  CHECK(names.count("uint4") == 1);
  for (const char* bad : {"float128", "Float32", "float", "int", "float32x0", "float32x65536",
                          "float32x", "x4", "float032", " float32", "bool8", "int8x04", ""}) {
    CAPTURE(bad);
    CHECK_DLB_ERROR(ParseDtype(bad), ErrorCode::kInvalidDtype, "' is unknown; accepted: int1, ");
  }
  CHECK_DLB_ERROR(ParseDtype("float128"), ErrorCode::kInvalidDtype,
                  "ParseDtype: dtype 'float128' is unknown; accepted: int1, int2, int4, int8, "
                  "int16, int32, int64, uint1, uint2, uint4, uint8, uint16, uint32, uint64, "
                  "float16, float32, float64, opaque_handle8");
  for (const char* bad : {"int3", "uint0", "int5", "uint04"}) {
    CAPTURE(bad);
    CHECK_DLB_ERROR(ParseDtype(bad), ErrorCode::kInvalidDtype, "' is unknown");
  }
  CHECK_DLB_ERROR(ParseDtype("x"), ErrorCode::kInvalidDtype,
                  "bfloat16, complex64, complex128, bool");
}

TEST_CASE("HC-1 AllocateHostTensor: C-contiguous host memory freed by its release") {
  const int64_t shape[] = {3, 5};
  Tensor t = dlbridge::AllocateHostTensor({kDLFloat, 64, 1}, 2, shape);
  CHECK(t.descriptor.GetSizeInBytes() == 120);
  CHECK(t.descriptor.GetPointer() != 0);
  CHECK(t.descriptor.GetMemorySpaceKind() == dlbridge::MemorySpace::kHost);
  CHECK(t.descriptor.HasOwnership());
  CHECK(t.layout.Strides()[0] == 5);
  CHECK(t.layout.ByteOffset() == 0);
  CHECK(t.device.device_type == kDLCPU);
  CHECK(t.flags == 0);
  std::memset(reinterpret_cast<void*>(static_cast<intptr_t>(t.descriptor.GetPointer())), 1, 120);
  DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
  m->deleter(m);  // frees the block (leak checkers would say otherwise)
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
  const int64_t odd[] = {3};
  CHECK(
      dlbridge::AllocateHostTensor({kDLFloat4_e2m1fn, 4, 1}, 1, odd).descriptor.GetSizeInBytes() ==
      2);  // packed: 12 bits, rounded up
#endif
  const int64_t empty[] = {0, 4};
  Tensor e = dlbridge::AllocateHostTensor({kDLInt, 8, 1}, 2, empty);
  CHECK(e.descriptor.GetSizeInBytes() == 0);
  CHECK(dlbridge::AllocateHostTensor({kDLInt, 32, 1}, 0, nullptr).descriptor.GetSizeInBytes() == 4);
  CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLFloat, 24, 1}, 1, shape),
                  ErrorCode::kInvalidDtype, "AllocateHostTensor: dtype.bits 24");
  const int64_t negative[] = {-1};
  CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLInt, 8, 1}, 1, negative),
                  ErrorCode::kInvalidShape, "-1");
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 30};
  CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLInt, 8, 1}, 2, huge), ErrorCode::kOverflow,
                  "overflow");
  SUBCASE("sub-byte integers are packed") {
    const int64_t five[] = {5};
    Tensor u4 = dlbridge::AllocateHostTensor({kDLUInt, 4, 1}, 1, five);
    CHECK(u4.descriptor.GetSizeInBytes() == 3);  // 20 bits
    CHECK(dlbridge::AllocateHostTensor({kDLInt, 1, 1}, 1, five).descriptor.GetSizeInBytes() == 1);
    CHECK(dlbridge::AllocateHostTensor({kDLInt, 2, 3}, 1, five).descriptor.GetSizeInBytes() ==
          4);  // 5 elements of 6 bits
    DLManagedTensorVersioned* exported = dlbridge::ToDLPackVersioned(std::move(u4));
    CHECK(exported->dl_tensor.dtype.bits == 4);
    Tensor back = dlbridge::FromDLPack(exported);  // IMP-12 accepts it, IMP-13 sizes it packed
    CHECK(back.descriptor.GetSizeInBytes() == 3);
  }
  SUBCASE("huge sub-byte shapes: kOverflow naming what was too large, never a negative size") {
    // 2^62 * 2^1 int4 elements: the count fits int64 only just, the bits would not.
    const int64_t count[] = {int64_t{1} << 62, 2};
    CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLInt, 4, 1}, 2, count), ErrorCode::kOverflow,
                    "AllocateHostTensor: the element count overflows int64 at shape[1] = 2");
    // 2^62 uint4x7 elements: a valid count whose 28 bits each pass INT64_MAX bytes.
    const int64_t wide[] = {int64_t{1} << 62};
    CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLUInt, 4, 7}, 1, wide), ErrorCode::kOverflow,
                    "AllocateHostTensor: 4611686018427387904 elements of uint4x7 (28 bits each) "
                    "take more than INT64_MAX bytes; the shape or dtype.lanes is too large");
    const int64_t lanes[] = {int64_t{1} << 50};
    CHECK_DLB_ERROR(dlbridge::AllocateHostTensor({kDLInt, 8, 65535}, 1, lanes),
                    ErrorCode::kOverflow, "(524280 bits each) take more than INT64_MAX bytes");
  }
}

TEST_CASE("HC-2 CopyToHost validates like an export and copies any strides C-contiguously") {
  Buffer buf;
  SUBCASE("strided and negative strides: the view [::-1, ::2] of a 3x4 matrix") {
    ReleaseCounter c;  // declared first: it must outlive `view`, whose drop calls it
    Tensor view = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {3, 2}, {-4, 2}, 32), 48);
    view.descriptor.SetRelease(&ReleaseCounter::Release, &c);
    Tensor copy = dlbridge::CopyToHost(view);
    CHECK(view.descriptor.HasOwnership());  // the source keeps its hold
    CHECK(copy.layout.Strides()[0] == 2);
    CHECK(copy.layout.Strides()[1] == 1);
    CHECK(copy.descriptor.GetSizeInBytes() == 24);
    CHECK(copy.descriptor.GetPointer() != view.descriptor.GetPointer());
    const float expected[] = {8, 10, 4, 6, 0, 2};
    CHECK(std::memcmp(Floats(copy), expected, sizeof expected) == 0);
    CHECK(c.calls == 0);
  }
  SUBCASE("contiguous with an offset, zero strides, 3-d") {
    Tensor t = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {2, 3}, {}, 8));
    Tensor copy = dlbridge::CopyToHost(t);
    const float contiguous[] = {2, 3, 4, 5, 6, 7};
    CHECK(std::memcmp(Floats(copy), contiguous, sizeof contiguous) == 0);
    Tensor broadcast = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {3, 2}, {0, 1}, 4));
    const float repeated[] = {1, 2, 1, 2, 1, 2};
    CHECK(std::memcmp(Floats(dlbridge::CopyToHost(broadcast)), repeated, sizeof repeated) == 0);
    Tensor cube = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {2, 2, 2}, {1, 4, 2}));
    const float transposed[] = {0, 2, 4, 6, 1, 3, 5, 7};
    CHECK(std::memcmp(Floats(dlbridge::CopyToHost(cube)), transposed, sizeof transposed) == 0);
  }
  SUBCASE("0-d and empty") {
    Tensor scalar = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {}, {}, 12));
    Tensor one = dlbridge::CopyToHost(scalar);
    CHECK(one.layout.Ndim() == 0);
    CHECK(one.descriptor.GetSizeInBytes() == 4);
    CHECK(Floats(one)[0] == 3.0f);
    Tensor empty;
    empty.layout = TensorLayout({kDLFloat, 32, 1}, {0, 3});
    Tensor none = dlbridge::CopyToHost(empty);
    CHECK(none.descriptor.GetSizeInBytes() == 0);
    CHECK(none.layout.Shape()[1] == 3);
  }
  SUBCASE("read-only and pinned sources give writable kDLCPU copies") {
    Tensor t = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {4}));
    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    t.device = {kDLCUDAHost, 0};
    Tensor copy = dlbridge::CopyToHost(t);
    CHECK(copy.flags == 0);
    CHECK(copy.device.device_type == kDLCPU);
    CHECK(Floats(copy)[3] == 3.0f);
  }
  SUBCASE("invalid input: the export's Error") {
    Tensor t = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {7}), 24);
    CHECK_DLB_ERROR(dlbridge::CopyToHost(t), ErrorCode::kOutOfBounds,
                    "ToDLPackVersioned: the layout reaches bytes [0, 28)");
  }
}

TEST_CASE("HC-3 CopyToHost reads host-readable memory itself and GPU memory through CopyTo") {
  Buffer buf;
  Tensor gpu = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {4}));
  gpu.descriptor.SetMemorySpace("cuda");
  gpu.device = {kDLCUDA, 0};
  dlbridge::ExportOptions off;
  off.verify_device = dlbridge::DeviceVerification::kOff;
  // GPU memory is the runtime's to copy (spec/copies.md): without one, the runtime's error.
  dlbridge::testing::SetRuntimeLibrary(dlbridge::GpuRuntime::kCuda, "/nonexistent/libcuda.so.1");
  CHECK_DLB_ERROR(dlbridge::CopyToHost(gpu, off), ErrorCode::kRuntimeUnavailable, "CopyTo: CUDA");
  dlbridge::testing::SetRuntimeLibrary(dlbridge::GpuRuntime::kCuda, nullptr);
  // Managed memory is read by the CPU at its own address: no runtime is asked.
  const float values[] = {1, 2, 3, 4};
  std::memcpy(buf.bytes, values, sizeof values);
  gpu.device = {kDLCUDAManaged, 0};
  Tensor copy = dlbridge::CopyToHost(gpu, off);
  CHECK(std::memcmp(
            reinterpret_cast<const void*>(static_cast<intptr_t>(copy.descriptor.GetPointer())),
            values, sizeof values) == 0);
}

namespace {

// Element i of packed `bits`-bit elements at `bytes` (little bit-endian, CH-35).
unsigned Packed(const Tensor& t, int64_t bits, int64_t i) {
  const auto* bytes =
      reinterpret_cast<const unsigned char*>(static_cast<intptr_t>(t.descriptor.GetPointer()));
  unsigned v = 0;
  for (int64_t b = 0; b < bits; ++b) {
    v |= ((bytes[(i * bits + b) / 8] >> ((i * bits + b) % 8)) & 1u) << b;
  }
  return v;
}

}  // namespace

TEST_CASE("HC-4 CopyToHost copies sub-byte elements bit by bit into the packed form") {
  Buffer buf;
  SUBCASE("packed uint4, reversed: [6::-1] of 0..7") {
    // Elements 0..7 packed two per byte, low nibble first: 0x10, 0x32, 0x54, 0x76.
    const unsigned char nibbles[] = {0x10, 0x32, 0x54, 0x76};
    std::memcpy(buf.bytes, nibbles, 4);
    ReleaseCounter c;
    Tensor t;
    t.descriptor.Set(buf.Address(), 4, "host");
    t.descriptor.SetRelease(&ReleaseCounter::Release, &c);
    // Element zero is element 6 (byte 3's low nibble: packed elements start on bytes).
    t.layout = TensorLayout({kDLUInt, 4, 1}, {7}, {-1}, 3);
    Tensor copy = dlbridge::CopyToHost(t);
    CHECK(copy.descriptor.GetSizeInBytes() == 4);
    CHECK(copy.flags == 0);
    for (int64_t i = 0; i < 7; ++i) {
      CAPTURE(i);
      CHECK(Packed(copy, 4, i) == static_cast<unsigned>(6 - i));
    }
    CHECK(t.descriptor.HasOwnership());
  }
  SUBCASE("int2 2x3 transposed, and int1 every other bit") {
    // int2 values 0,1,2,3,0,1 in C order of a 2x3: bits 00 01 10 11 00 01 -> 0xE4, 0x04.
    const unsigned char two[] = {0xE4, 0x04};
    std::memcpy(buf.bytes, two, 2);
    Tensor t;
    t.descriptor.Set(buf.Address(), 2, "host");
    t.layout = TensorLayout({kDLInt, 2, 1}, {3, 2}, {1, 3});  // the transpose
    Tensor copy = dlbridge::CopyToHost(t);
    const unsigned expected[] = {0, 3, 1, 0, 2, 1};
    for (int64_t i = 0; i < 6; ++i) {
      CAPTURE(i);
      CHECK(Packed(copy, 2, i) == expected[i]);
    }
    buf.bytes[0] = 0x55;  // bits 1,0,1,0,...: every other one is 1
    Tensor bits;
    bits.descriptor.Set(buf.Address(), 1, "host");
    bits.layout = TensorLayout({kDLUInt, 1, 1}, {4}, {2});
    Tensor ones = dlbridge::CopyToHost(bits);
    CHECK(ones.descriptor.GetSizeInBytes() == 1);
    CHECK((static_cast<unsigned>(Packed(ones, 4, 0)) == 0xFu));
  }
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  SUBCASE("a padded source (one byte per element) becomes packed") {
    const unsigned char padded[] = {0x1, 0x2, 0x3};
    std::memcpy(buf.bytes, padded, 3);
    Tensor t;
    t.descriptor.Set(buf.Address(), 3, "host");
    t.layout = TensorLayout({kDLInt, 4, 1}, {3});
    t.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    Tensor copy = dlbridge::CopyToHost(t);
    CHECK(copy.descriptor.GetSizeInBytes() == 2);
    CHECK(copy.flags == 0);
    for (int64_t i = 0; i < 3; ++i) CHECK(Packed(copy, 4, i) == static_cast<unsigned>(i + 1));
  }
#endif
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
  SUBCASE("float4 too") {
    buf.bytes[0] = 0xBA;
    Tensor t;
    t.descriptor.Set(buf.Address(), 1, "host");
    t.layout = TensorLayout({kDLFloat4_e2m1fn, 4, 1}, {2});
    Tensor copy = dlbridge::CopyToHost(t);
    CHECK(Packed(copy, 4, 0) == 0xAu);
    CHECK(Packed(copy, 4, 1) == 0xBu);
  }
#endif
}
