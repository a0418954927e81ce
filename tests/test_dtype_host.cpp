// Dtype names both ways and host tensors (spec/validation.md DT-*, HC-*).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "counting.h"
#include "dlbridge/dtype.h"
#include "dlbridge/host_copy.h"

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
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
  CHECK(DtypeName({kDLFloat8_e4m3fn, 8, 1}) == "float8_e4m3fn");
  CHECK(DtypeName({kDLFloat4_e2m1fn, 4, 2}) == "float4_e2m1fnx2");
#endif
  CHECK_DLB_ERROR(DtypeName({kDLFloat, 24, 1}), ErrorCode::kInvalidDtype,
                  "DtypeName: dtype.bits 24 does not match code 2 (float); accepted bits: 16, "
                  "32, 64");
  CHECK_DLB_ERROR(DtypeName({99, 8, 1}), ErrorCode::kInvalidDtype, "dtype.code 99 is unknown");
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
  for (const char* bad : {"float128", "Float32", "float", "int", "float32x0", "float32x65536",
                          "float32x", "x4", "float032", " float32", "bool8", "int8x04", ""}) {
    CAPTURE(bad);
    CHECK_DLB_ERROR(ParseDtype(bad), ErrorCode::kInvalidDtype, "' is unknown; accepted: int8, ");
  }
  CHECK_DLB_ERROR(ParseDtype("float128"), ErrorCode::kInvalidDtype,
                  "ParseDtype: dtype 'float128' is unknown; accepted: int8, int16, int32, int64, "
                  "uint8, uint16, uint32, uint64, float16, float32, float64, opaque_handle8");
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

TEST_CASE("HC-3 CopyToHost refuses memory the CPU cannot read and sub-byte dtypes") {
  Buffer buf;
  Tensor gpu = Counting(buf, TensorLayout({kDLFloat, 32, 1}, {4}));
  gpu.descriptor.SetMemorySpace("cuda");
  gpu.device = {kDLCUDA, 0};
  dlbridge::ExportOptions off;
  off.verify_device = dlbridge::DeviceVerification::kOff;
  CHECK_DLB_ERROR(dlbridge::CopyToHost(gpu, off), ErrorCode::kUnsupportedDevice,
                  "CopyToHost: kDLCUDA memory is not host-addressable");
  gpu.device = {kDLCUDAManaged, 0};
  CHECK_DLB_ERROR(dlbridge::CopyToHost(gpu, off), ErrorCode::kUnsupportedDevice,
                  "kDLCUDAManaged memory is not host-addressable");
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
  Tensor packed = Counting(buf, TensorLayout({kDLFloat4_e2m1fn, 4, 1}, {4}));
  CHECK_DLB_ERROR(dlbridge::CopyToHost(packed), ErrorCode::kUnsupportedDevice,
                  "CopyToHost: float4_e2m1fn elements are not whole bytes");
#endif
}
