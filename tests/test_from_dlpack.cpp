// Import rules (spec/validation.md IMP-*, spec/lifetime.md LT-*).
#include <doctest/doctest.h>

#include <limits>

#include "counting.h"

using dlbridge::ErrorCode;
using dlbridge::FromDLPack;
using dlbridge::ImportOptions;
using dlbridge::Tensor;
using namespace dlbtest;

TEST_CASE_TEMPLATE("IMP-1 success: the deleter becomes the release and runs once, on drop", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {2, 3});
  {
    Tensor t = FromDLPack(&h.managed);
    CHECK(t.descriptor.HasOwnership());
    CHECK(t.descriptor.GetReleaseContext() == &h.managed);
    CHECK(t.descriptor.GetPointer() == buf.Address());
    CHECK(t.descriptor.GetSizeInBytes() == 24);
    CHECK(std::string(t.descriptor.GetMemorySpace()) == "host");
    CHECK(t.layout.Ndim() == 2);
    CHECK(t.layout.Shape()[1] == 3);
    CHECK(t.layout.Strides()[0] == 3);
    CHECK(t.layout.ByteOffset() == 0);
    CHECK(t.device.device_type == kDLCPU);
    CHECK(h.deletes == 0);
  }
  CHECK(h.deletes == 1);
}

TEST_CASE_TEMPLATE("IMP-2 failure: the deleter runs exactly once before Error", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {2});
  h.T().shape[0] = -4;
  CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kInvalidShape,
                  "shape[0] is -4; extents must be >= 0");
  CHECK(h.deletes == 1);
}

TEST_CASE("IMP-3 a NULL deleter is legal: the result holds nothing, null input is an error") {
  Buffer buf;
  Versioned h(buf.bytes, {4});
  h.managed.deleter = nullptr;
  Tensor t = FromDLPack(&h.managed);
  CHECK_FALSE(t.descriptor.HasOwnership());
  CHECK(t.descriptor.GetPointer() == buf.Address());
  CHECK_DLB_ERROR(FromDLPack(static_cast<DLManagedTensorVersioned*>(nullptr)),
                  ErrorCode::kInvalidArgument, "the managed tensor is null");
  CHECK_DLB_ERROR(FromDLPack(static_cast<DLManagedTensor*>(nullptr)), ErrorCode::kInvalidArgument,
                  "null");
}

TEST_CASE("IMP-4 another major version: deleter called, nothing past flags read") {
  for (uint32_t major : {0u, 2u, 7u}) {
    Versioned h(nullptr, {});
    h.managed.version = {major, 5};
    // Garbage where a 1.x DLTensor would be: touching it would crash or trip ASan.
    h.T().ndim = -99;
    h.T().shape = reinterpret_cast<int64_t*>(uintptr_t{0x8});
    h.T().dtype = {250, 3, 0};
    h.T().device = {static_cast<DLDeviceType>(777), -3};
    CHECK_DLB_ERROR(
        FromDLPack(&h.managed), ErrorCode::kUnsupportedVersion,
        "DLPack version " + std::to_string(major) + ".5 is not supported; accepted: 1.x");
    CHECK(h.deletes == 1);
  }
}

TEST_CASE("IMP-5 a newer minor is accepted, values this build does not know are rejected") {
  Buffer buf;
  Versioned ok(buf.bytes, {4});
  ok.managed.version = {1, 99};
  { Tensor t = FromDLPack(&ok.managed); }
  CHECK(ok.deletes == 1);

  Versioned flag(buf.bytes, {4});
  flag.managed.version = {1, 99};
  flag.managed.flags = uint64_t{1} << 9;
  CHECK_DLB_ERROR(FromDLPack(&flag.managed), ErrorCode::kInvalidFlags,
                  "flags has bits 0x200 that DLPack");
  CHECK(flag.deletes == 1);

  Versioned dev(buf.bytes, {4});
  dev.managed.version = {1, 99};
  dev.T().device.device_type = static_cast<DLDeviceType>(42);
  CHECK_DLB_ERROR(FromDLPack(&dev.managed), ErrorCode::kUnsupportedDevice,
                  "device_type 42 is unknown to this build");
  CHECK(dev.deletes == 1);

  Versioned code(buf.bytes, {4});
  code.managed.version = {1, 99};
  code.T().dtype = {99, 8, 1};
  CHECK_DLB_ERROR(FromDLPack(&code.managed), ErrorCode::kUnsupportedDtype,
                  "dtype.code 99 is unknown to this build");
  CHECK(code.deletes == 1);
}

TEST_CASE_TEMPLATE("IMP-6 ndim must be in [0, 64]", M, DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (int32_t ndim : {-1, 65, 1000}) {
    HandBuilt<M> h(buf.bytes, {1});
    h.T().ndim = ndim;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kInvalidShape,
                    "ndim is " + std::to_string(ndim) + "; accepted: 0..64");
    CHECK(h.deletes == 1);
  }
  HandBuilt<M> wide(buf.bytes, {1});
  wide.T().ndim = 64;
  for (int i = 0; i < 64; ++i) {
    wide.shape[i] = 1;
    wide.strides[i] = 1;
  }
  {
    Tensor t = FromDLPack(&wide.managed);
    CHECK(t.layout.Ndim() == 64);
  }
  CHECK(wide.deletes == 1);
}

TEST_CASE_TEMPLATE("IMP-7 shape must not be NULL when ndim > 0", M, DLManagedTensorVersioned,
                   DLManagedTensor) {
  Buffer buf;
  HandBuilt<M> h(buf.bytes, {3});
  h.T().shape = nullptr;
  CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kInvalidShape, "shape is NULL with ndim 1");
  CHECK(h.deletes == 1);
}

TEST_CASE_TEMPLATE("IMP-8 every extent must be >= 0, an empty extent is fine", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  for (int64_t extent : {int64_t{-1}, int64_t{-7}, std::numeric_limits<int64_t>::min()}) {
    HandBuilt<M> h(buf.bytes, {2, 3});
    h.shape[1] = extent;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kInvalidShape,
                    "shape[1] is " + std::to_string(extent) + "; extents must be >= 0");
    CHECK(h.deletes == 1);
  }
  HandBuilt<M> empty(buf.bytes, {2, 0});
  {
    Tensor t = FromDLPack(&empty.managed);
    CHECK(t.layout.Shape()[1] == 0);
    CHECK(t.descriptor.GetSizeInBytes() == 0);
  }
  CHECK(empty.deletes == 1);
}

TEST_CASE("IMP-9 NULL strides: C-contiguous for legacy and < 1.2, rejected for >= 1.2") {
  Buffer buf;
  Legacy l(buf.bytes, {2, 5});
  l.T().strides = nullptr;
  {
    Tensor t = FromDLPack(&l.managed);
    CHECK(t.layout.Strides()[0] == 5);
    CHECK(t.layout.Strides()[1] == 1);
    CHECK(t.descriptor.GetSizeInBytes() == 40);
  }
  Versioned old(buf.bytes, {2, 5});
  old.managed.version = {1, 1};
  old.T().strides = nullptr;
  { Tensor t = FromDLPack(&old.managed); }
  Versioned now(buf.bytes, {2, 5});
  now.managed.version = {1, 2};
  now.T().strides = nullptr;
  CHECK_DLB_ERROR(FromDLPack(&now.managed), ErrorCode::kInvalidStrides,
                  "strides is NULL with ndim 2; DLPack >= 1.2 requires strides");
  Versioned relaxed(buf.bytes, {2, 5});
  relaxed.managed.version = {1, 3};
  relaxed.T().strides = nullptr;
  ImportOptions opts;
  opts.allow_null_strides = true;
  { Tensor t = FromDLPack(&relaxed.managed, opts); }
  Versioned scalar(buf.bytes, {});
  scalar.managed.version = {1, 3};
  { Tensor t = FromDLPack(&scalar.managed); }  // 0-d needs no strides
  CHECK(l.deletes == 1);
  CHECK(old.deletes == 1);
  CHECK(now.deletes == 1);
  CHECK(relaxed.deletes == 1);
  CHECK(scalar.deletes == 1);
}

TEST_CASE_TEMPLATE("IMP-10 extent, stride and offset arithmetic is overflow-checked", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  const int64_t big = std::numeric_limits<int64_t>::max() / 2;
  SUBCASE("element count") {
    HandBuilt<M> h(buf.bytes, {4, 1});
    h.shape[1] = big;
    h.strides[0] = 1;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kOverflow,
                    "the element count overflows int64 at shape[1]");
    CHECK(h.deletes == 1);
  }
  SUBCASE("stride reach") {
    HandBuilt<M> h(buf.bytes, {3});
    h.strides[0] = big + 1;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kOverflow, "strides[0] = ");
    CHECK(h.deletes == 1);
  }
  SUBCASE("bytes") {
    HandBuilt<M> h(buf.bytes, {2});
    h.strides[0] = big / 2;
    h.T().dtype = {kDLFloat, 64, 1};
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kOverflow, "in bytes overflows int64");
    CHECK(h.deletes == 1);
  }
  SUBCASE("byte offset") {
    HandBuilt<M> h(buf.bytes, {2});
    h.T().byte_offset = uint64_t{1} << 63;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kOverflow,
                    "byte_offset 9223372036854775808");
    CHECK(h.deletes == 1);
  }
  SUBCASE("address wrap") {
    HandBuilt<M> h(reinterpret_cast<void*>(uintptr_t{64}), {4});
    h.strides[0] = -8;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kOverflow, "wraps around the address space");
    CHECK(h.deletes == 1);
  }
}

TEST_CASE_TEMPLATE("IMP-11 NULL data needs zero elements, zero elements accept any data", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  HandBuilt<M> h(nullptr, {3});
  CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kNullData,
                  "data is NULL but the tensor has 3 elements");
  CHECK(h.deletes == 1);
  HandBuilt<M> empty(reinterpret_cast<void*>(uintptr_t{0xdead}), {4, 0});
  {
    Tensor t = FromDLPack(&empty.managed);
    CHECK(t.descriptor.GetPointer() == 0);
    CHECK(t.descriptor.GetSizeInBytes() == 0);
    CHECK(t.layout.ElementCount() == 0);
  }
  HandBuilt<M> nothing(nullptr, {0});
  { Tensor t = FromDLPack(&nothing.managed); }
  // Extents whose product overflows before the zero: still an empty tensor, accepted.
  HandBuilt<M> wide(nullptr, {2, int64_t{1} << 40, int64_t{1} << 40, 0});
  wide.T().strides = nullptr;
  if constexpr (HandBuilt<M>::kVersioned) wide.managed.version = {1, 1};
  {
    Tensor t = FromDLPack(&wide.managed);
    CHECK(t.layout.ElementCount() == 0);
  }
  CHECK(wide.deletes == 1);
  CHECK(empty.deletes == 1);
  CHECK(nothing.deletes == 1);
}

TEST_CASE("IMP-12 dtype: lanes >= 1 and bits that match the code") {
  Buffer buf;
  struct Case {
    DLDataType dtype;
    const char* message;
  };
  const Case bad[] = {
    {{kDLFloat, 32, 0}, "dtype.lanes is 0; lanes must be >= 1"},
    {{kDLBool, 1, 1}, "dtype.bits 1 does not match code 6 (bool); accepted bits: 8"},
    {{kDLBfloat, 32, 1}, "code 4 (bfloat); accepted bits: 16"},
    {{kDLInt, 7, 1}, "accepted bits: 1, 2, 4, 8, 16, 32, 64"},
    {{kDLUInt, 3, 1}, "code 1 (uint); accepted bits: 1, 2, 4, 8, 16, 32, 64"},
    {{kDLComplex, 32, 1}, "accepted bits: 64, 128"},
    {{kDLFloat, 8, 1}, "accepted bits: 16, 32, 64"},
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
    {{kDLFloat8_e4m3fn, 16, 1}, "(float8_e4m3fn); accepted bits: 8"},
    {{kDLFloat6_e2m3fn, 8, 1}, "(float6_e2m3fn); accepted bits: 6"},
    {{kDLFloat4_e2m1fn, 8, 1}, "(float4_e2m1fn); accepted bits: 4"},
#endif
    {{200, 8, 1}, "dtype.code 200 is unknown"},
  };
  for (const Case& c : bad) {
    Versioned h(buf.bytes, {2});
    h.T().dtype = c.dtype;
    // An unknown code is well-formed but not exchangeable; wrong bits are malformed.
    const ErrorCode expected =
        c.dtype.code == 200 ? ErrorCode::kUnsupportedDtype : ErrorCode::kInvalidDtype;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), expected, c.message);
    CHECK(h.deletes == 1);
  }
  const DLDataType good[] = {{kDLInt, 8, 1},     {kDLUInt, 64, 1}, {kDLFloat, 16, 1},
                             {kDLBfloat, 16, 1}, {kDLBool, 8, 1},  {kDLComplex, 128, 1},
                             {kDLFloat, 32, 4}};
  for (DLDataType d : good) {
    Versioned h(buf.bytes, {2});
    h.T().dtype = d;
    {
      Tensor t = FromDLPack(&h.managed);
      CHECK(t.descriptor.GetSizeInBytes() == 2 * ((d.bits * d.lanes + 7) / 8));
    }
    CHECK(h.deletes == 1);
  }
}

#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
TEST_CASE("IMP-13 sub-byte sizes honour IS_SUBBYTE_TYPE_PADDED") {
  Buffer buf;
  Versioned packed(buf.bytes, {7});
  packed.T().dtype = {kDLFloat4_e2m1fn, 4, 1};
  {
    Tensor t = FromDLPack(&packed.managed);
    CHECK(t.descriptor.GetSizeInBytes() == 4);  // 28 bits round up to 4 bytes
  }
  Versioned padded(buf.bytes, {7});
  padded.T().dtype = {kDLFloat4_e2m1fn, 4, 1};
  padded.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  {
    Tensor t = FromDLPack(&padded.managed);
    CHECK(t.descriptor.GetSizeInBytes() == 7);
    CHECK(t.flags == DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  }
  Versioned odd(buf.bytes, {3});
  odd.T().dtype = {kDLFloat6_e3m2fn, 6, 1};
  odd.strides[0] = -1;
  odd.T().byte_offset = 8;
  CHECK_DLB_ERROR(FromDLPack(&odd.managed), ErrorCode::kInvalidStrides,
                  "does not start on a byte boundary");
  CHECK(packed.deletes == 1);
  CHECK(padded.deletes == 1);
  CHECK(odd.deletes == 1);
}
#endif

TEST_CASE("IMP-13 sub-byte integers (int1/2/4, uint1/2/4) import and re-export packed or padded") {
  Buffer buf;
  struct Case {
    DLDataType dtype;
    int64_t extent;
    int64_t packedBytes;
  };
  const Case cases[] = {{{kDLInt, 4, 1}, 7, 4},  {{kDLUInt, 4, 1}, 8, 4}, {{kDLInt, 2, 1}, 5, 2},
                        {{kDLUInt, 2, 1}, 4, 1}, {{kDLInt, 1, 1}, 9, 2},  {{kDLUInt, 1, 1}, 8, 1},
                        {{kDLInt, 2, 3}, 3, 3}};
  for (const Case& c : cases) {
    CAPTURE(int{c.dtype.code});
    CAPTURE(int{c.dtype.bits});
    Versioned v(buf.bytes, {c.extent}, c.dtype);
    Legacy l(buf.bytes, {c.extent}, c.dtype);
    {
      Tensor t = FromDLPack(&v.managed);
      CHECK(t.descriptor.GetSizeInBytes() == c.packedBytes);
      Tensor u = FromDLPack(&l.managed);
      CHECK(u.descriptor.GetSizeInBytes() == c.packedBytes);
      u.flags = 0;
      DLManagedTensor* again = dlbridge::ToDLPack(std::move(u));  // legacy: packed is fine
      CHECK(again->dl_tensor.dtype.bits == c.dtype.bits);
      again->deleter(again);
    }
    CHECK(v.deletes == 1);
    CHECK(l.deletes == 1);
  }
  Versioned odd(buf.bytes, {3}, {kDLInt, 4, 1});
  odd.strides[0] = -1;
  odd.T().byte_offset = 4;  // the lowest element, two back, starts mid-byte? no: 8 bits back
  {
    Tensor t = FromDLPack(&odd.managed);  // element -2 is 8 bits back: a byte boundary
    CHECK(t.descriptor.GetSizeInBytes() == 2);
  }
  Versioned mid(buf.bytes, {2}, {kDLUInt, 4, 1});
  mid.strides[0] = -1;
  mid.T().byte_offset = 4;
  CHECK_DLB_ERROR(FromDLPack(&mid.managed), ErrorCode::kInvalidStrides,
                  "with packed uint4 elements the lowest reachable element does not start on a "
                  "byte boundary");
  CHECK(mid.deletes == 1);
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  Versioned padded(buf.bytes, {7}, {kDLInt, 4, 1});
  padded.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  {
    Tensor t = FromDLPack(&padded.managed);
    CHECK(t.descriptor.GetSizeInBytes() == 7);  // a byte per element
  }
  CHECK(padded.deletes == 1);
#endif
}

TEST_CASE_TEMPLATE("IMP-14 the descriptor spans exactly the reachable bytes", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  Buffer buf;
  SUBCASE("negative strides move the pointer to the lowest element") {
    // A reversed view of 4 float32 whose element zero is the last one in memory.
    HandBuilt<M> h(buf.bytes + 12, {4});
    h.strides[0] = -1;
    Tensor t = FromDLPack(&h.managed);
    CHECK(t.descriptor.GetPointer() == buf.Address());
    CHECK(t.descriptor.GetSizeInBytes() == 16);
    CHECK(t.layout.ByteOffset() == 12);
    CHECK(t.layout.Strides()[0] == -1);
  }
  SUBCASE("byte_offset and a strided view") {
    HandBuilt<M> h(buf.bytes, {2, 2});
    h.T().byte_offset = 32;
    h.strides[0] = 8;
    h.strides[1] = 2;
    Tensor t = FromDLPack(&h.managed);
    CHECK(t.descriptor.GetPointer() == buf.Address() + 32);
    CHECK(t.descriptor.GetSizeInBytes() == (8 + 2 + 1) * 4);
    CHECK(t.layout.ByteOffset() == 0);
  }
}

TEST_CASE("IMP-15 READ_ONLY and IS_COPIED are kept, read-only can be refused") {
  Buffer buf;
  Versioned ro(buf.bytes, {2});
  ro.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
  {
    Tensor t = FromDLPack(&ro.managed);
    CHECK(t.flags == (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED));
  }
  Versioned refused(buf.bytes, {2});
  refused.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ImportOptions writable;
  writable.require_writable = true;
  CHECK_DLB_ERROR(FromDLPack(&refused.managed, writable), ErrorCode::kReadOnly,
                  "the tensor is read-only and ImportOptions::require_writable is set");
  Legacy legacy(buf.bytes, {2});
  ImportOptions legacyRo;
  legacyRo.legacy_read_only = true;
  {
    Tensor t = FromDLPack(&legacy.managed, legacyRo);
    CHECK(t.flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  }
  Legacy legacyRefused(buf.bytes, {2});
  legacyRo.require_writable = true;
  CHECK_DLB_ERROR(FromDLPack(&legacyRefused.managed, legacyRo), ErrorCode::kReadOnly, "read-only");
  CHECK(ro.deletes == 1);
  CHECK(refused.deletes == 1);
  CHECK(legacy.deletes == 1);
  CHECK(legacyRefused.deletes == 1);
}

namespace {

// Models Metal buffers: handles are indexes into a small table.
struct ModelResolver : dlbridge::MetalResolver {
  dlbridge::MetalBufferInfo buffers[4];
  bool Resolve(void* buffer, dlbridge::MetalBufferInfo& info) const override {
    const auto index = reinterpret_cast<uintptr_t>(buffer);
    if (index < 1 || index > 4) return false;
    info = buffers[index - 1];
    return true;
  }
};

}  // namespace

TEST_CASE("IMP-17 kDLMetal resolves shared storage to host memory, rejects the rest") {
  Buffer buf;
  ModelResolver r;
  r.buffers[0] = {dlbridge::MetalStorageMode::kShared, buf.bytes, 256};
  r.buffers[1] = {dlbridge::MetalStorageMode::kPrivate, nullptr, 256};
  r.buffers[2] = {dlbridge::MetalStorageMode::kMemoryless, nullptr, 256};
  r.buffers[3] = {dlbridge::MetalStorageMode::kManaged, buf.bytes, 256};
  ImportOptions opts;
  opts.metal_resolver = &r;
  auto metal = [](uintptr_t handle) {
    auto h = std::make_unique<Versioned>(reinterpret_cast<void*>(handle),
                                         std::initializer_list<int64_t>{4});
    h->T().device = {kDLMetal, 0};
    return h;
  };
  SUBCASE("no resolver") {
    auto h = metal(1);
    CHECK_DLB_ERROR(FromDLPack(&h->managed), ErrorCode::kMissingContext,
                    "kDLMetal holds an id<MTLBuffer>, not an address; register a MetalResolver");
    CHECK(h->deletes == 1);
  }
  SUBCASE("shared storage, through options and through the process-wide registration") {
    auto h = metal(1);
    h->T().byte_offset = 16;
    {
      Tensor t = FromDLPack(&h->managed, opts);
      CHECK(t.descriptor.GetPointer() == buf.Address() + 16);
      CHECK(std::string(t.descriptor.GetMemorySpace()) == "host");
      CHECK(t.device.device_type == kDLCPU);
    }
    CHECK(h->deletes == 1);
    dlbridge::SetMetalResolver(&r);
    auto g = metal(1);
    { Tensor t = FromDLPack(&g->managed); }
    dlbridge::SetMetalResolver(nullptr);
    CHECK(g->deletes == 1);
  }
  SUBCASE("private, memoryless and managed storage") {
    const char* names[] = {"private", "memoryless", "managed"};
    for (uintptr_t handle = 2; handle <= 4; ++handle) {
      auto h = metal(handle);
      CHECK_DLB_ERROR(FromDLPack(&h->managed, opts), ErrorCode::kUnsupportedDevice,
                      std::string(names[handle - 2]) + " storage; only shared storage");
      CHECK(h->deletes == 1);
    }
  }
  SUBCASE("unknown buffer, and a tensor past the buffer's length") {
    auto h = metal(9);
    CHECK_DLB_ERROR(FromDLPack(&h->managed, opts), ErrorCode::kInvalidArgument,
                    "the MetalResolver does not know buffer 0x9");
    auto big = metal(1);
    big->T().byte_offset = 250;
    CHECK_DLB_ERROR(FromDLPack(&big->managed, opts), ErrorCode::kOutOfBounds,
                    "reaches past the 256-byte Metal buffer");
    CHECK(h->deletes == 1);
    CHECK(big->deletes == 1);
  }
}

TEST_CASE("IMP-16 kDLOneAPI needs a Level Zero context") {
  Buffer buf;
  Versioned h(buf.bytes, {2});
  h.T().device = {kDLOneAPI, 0};
  CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kMissingContext,
                  "device_type kDLOneAPI needs ImportOptions::level_zero_context");
  CHECK(h.deletes == 1);
  Versioned g(buf.bytes, {2});
  g.T().device = {kDLOneAPI, 1};
  ImportOptions opts;
  int context = 0;
  opts.level_zero_context = &context;
  {
    Tensor t = FromDLPack(&g.managed, opts);
    CHECK(std::string(t.descriptor.GetMemorySpace()) == "level_zero");
    CHECK(t.device.device_id == 1);
  }
  CHECK(g.deletes == 1);
}
