// Export rules (spec/validation.md EXP-*, spec/lifetime.md LT-*).
#include <doctest/doctest.h>

#include <memory>

#include "counting.h"

using dlbridge::ErrorCode;
using dlbridge::ExportOptions;
using dlbridge::Tensor;
using dlbridge::ToDLPack;
using dlbridge::ToDLPackVersioned;
using namespace dlbtest;

TEST_CASE("EXP-1 release hold: manager_ctx is the release context, deleter releases once") {
  Buffer buf;
  ReleaseCounter c;
  Tensor t = HostTensor(buf, c, F32({4, 8}));
  DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
  CHECK_FALSE(t.descriptor.HasOwnership());
  CHECK(m->manager_ctx == &c);
  CHECK(m->dl_tensor.data == buf.bytes);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  CHECK(m->dl_tensor.device.device_id == 0);
  CHECK(c.calls == 0);
  m->deleter(m);
  CHECK(c.calls == 1);
}

TEST_CASE("EXP-2 owner hold: the block keeps the owner until the deleter runs") {
  auto storage = std::make_shared<std::vector<float>>(16, 1.5f);
  Tensor t;
  t.descriptor.Set(reinterpret_cast<intptr_t>(storage->data()), 64, "host");
  t.descriptor.SetOwner(storage);
  t.layout = F32({16});
  DLManagedTensor* m = ToDLPack(std::move(t));
  CHECK_FALSE(t.descriptor.HasOwnership());
  CHECK(storage.use_count() == 2);
  CHECK(m->manager_ctx != nullptr);
  CHECK(m->manager_ctx != storage.get());
  m->deleter(m);
  CHECK(storage.use_count() == 1);
}

TEST_CASE("EXP-3 no hold: manager_ctx is NULL and the deleter frees only the tensor") {
  Buffer buf;
  Tensor t;
  t.descriptor.Set(buf.Address(), 16, "host");
  t.layout = F32({4});
  DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
  CHECK(m->manager_ctx == nullptr);
  REQUIRE((m->deleter != nullptr));
  m->deleter(m);  // ASan/valgrind would flag a leak or a double free here
}

TEST_CASE("EXP-4 versioned export carries {1, DLPACK_MINOR_VERSION} and no flags") {
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({2})));
  CHECK(m->version.major == 1);
  CHECK(m->version.minor == DLPACK_MINOR_VERSION);
  CHECK(m->flags == 0);
  m->deleter(m);
  CHECK(c.calls == 1);
}

TEST_CASE("EXP-5 strides are always emitted, shape and strides are NULL only for 0-d") {
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({2, 3, 5})));
  REQUIRE(m->dl_tensor.ndim == 3);
  REQUIRE(m->dl_tensor.strides != nullptr);
  CHECK(m->dl_tensor.shape[0] == 2);
  CHECK(m->dl_tensor.shape[2] == 5);
  CHECK(m->dl_tensor.strides[0] == 15);
  CHECK(m->dl_tensor.strides[1] == 5);
  CHECK(m->dl_tensor.strides[2] == 1);
  m->deleter(m);
  DLManagedTensorVersioned* s = ToDLPackVersioned(HostTensor(buf, c, dlbridge::TensorLayout()));
  CHECK(s->dl_tensor.ndim == 0);
  CHECK(s->dl_tensor.shape == nullptr);
  CHECK(s->dl_tensor.strides == nullptr);
  CHECK(s->dl_tensor.data == buf.bytes);
  s->deleter(s);
  CHECK(c.calls == 2);
}

TEST_CASE("EXP-6 data is NULL when the tensor has no elements") {
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({3, 0, 2})));
  CHECK(m->dl_tensor.data == nullptr);
  CHECK(m->dl_tensor.byte_offset == 0);
  m->deleter(m);
  Tensor empty;  // no bytes at all
  empty.layout = F32({0});
  DLManagedTensor* l = ToDLPack(std::move(empty));
  CHECK(l->dl_tensor.data == nullptr);
  l->deleter(l);
  CHECK(c.calls == 1);
}

TEST_CASE("EXP-7 READ_ONLY when asked or inherited, legacy export of read-only data refused") {
  Buffer buf;
  ReleaseCounter c;
  ExportOptions ro;
  ro.read_only = true;
  DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({2})), ro);
  CHECK(m->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  Tensor t = HostTensor(buf, c, F32({2}));
  t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK_DLB_ERROR(ToDLPack(std::move(t)), ErrorCode::kReadOnly,
                  "a legacy DLManagedTensor cannot say so; use ToDLPackVersioned");
  CHECK(t.descriptor.HasOwnership());  // EXP-11: the caller keeps the hold
  CHECK(c.calls == 1);
  Tensor u = HostTensor(buf, c, F32({2}));
  CHECK_DLB_ERROR(ToDLPack(std::move(u), ro), ErrorCode::kReadOnly, "read-only");
  m = ToDLPackVersioned(std::move(t));
  CHECK(m->flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  m->deleter(m);
  CHECK(c.calls == 2);
}

TEST_CASE("EXP-8 IS_COPIED is never set on a zero-copy export") {
  Buffer buf;
  ReleaseCounter c;
  Tensor t = HostTensor(buf, c, F32({2}));
  t.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
  DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
  CHECK((m->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0);
  m->deleter(m);
  CHECK(c.calls == 1);
}

TEST_CASE("EXP-9 the layout must lie inside the described bytes") {
  Buffer buf;
  ReleaseCounter c;
  SUBCASE("exact fit") {
    DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({4, 4}), 64));
    m->deleter(m);
    CHECK(c.calls == 1);
  }
  SUBCASE("one element too many") {
    Tensor t = HostTensor(buf, c, F32({4, 4}), 60);
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kOutOfBounds,
                    "the layout reaches bytes [0, 64) from the pointer (byte offset 0) but the "
                    "descriptor describes [0, 60)");
    CHECK(t.descriptor.HasOwnership());
  }
  SUBCASE("byte offset past the buffer") {
    Tensor t = HostTensor(buf, c, F32({2}, {}, 60), 64);
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kOutOfBounds, "[60, 68)");
    CHECK(t.descriptor.HasOwnership());
  }
  SUBCASE("negative strides need a byte offset to stay inside") {
    Tensor bad = HostTensor(buf, c, F32({4}, {-1}), 16);
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(bad)), ErrorCode::kOutOfBounds, "[-12, 4)");
    Tensor good = HostTensor(buf, c, F32({4}, {-1}, 12), 16);
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(good));
    CHECK(m->dl_tensor.byte_offset == 12);
    CHECK(m->dl_tensor.strides[0] == -1);
    m->deleter(m);
    CHECK(c.calls == 1);
  }
  SUBCASE("strides whose reach overflows") {
    Tensor t = HostTensor(buf, c, F32({3}, {INT64_MAX / 2 + 1}));
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kOverflow, "reaches past int64");
    CHECK(t.descriptor.HasOwnership());
  }
  SUBCASE("zero elements fit any buffer") {
    DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({0, 100}), 0));
    m->deleter(m);
    CHECK(c.calls == 1);
  }
  SUBCASE("padded fp4 uses one byte per element, packed fp4 half a byte") {
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
    dlbridge::TensorLayout fp4({17, 4, 1}, {8});
    DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, fp4, 4));
    m->deleter(m);
    Tensor padded = HostTensor(buf, c, fp4, 4);
    padded.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(padded)), ErrorCode::kOutOfBounds, "[0, 8)");
    Tensor legacy = HostTensor(buf, c, fp4, 8);
    legacy.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    CHECK_DLB_ERROR(ToDLPack(std::move(legacy)), ErrorCode::kInvalidFlags,
                    "padded sub-byte float4_e2m1fn4 cannot be said in a legacy DLManagedTensor");
    CHECK(c.calls == 1);
#endif
  }
}

TEST_CASE("EXP-10 devices: host, cuda, hip, level_zero, and contradictions") {
  Buffer buf;
  ReleaseCounter c;
  auto make = [&](const char* space) {
    Tensor t = HostTensor(buf, c, F32({4}));
    t.descriptor.SetMemorySpace(space);
    return t;
  };
  SUBCASE("cuda needs an ordinal") {
    Tensor t = make("cuda");
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kMissingDeviceId,
                    "memory space \"cuda\" needs a device ordinal; set Tensor::device (e.g. "
                    "{kDLCUDA, 0}) or ExportOptions::device_id");
    CHECK(t.descriptor.HasOwnership());
    ExportOptions o;
    o.device_id = 3;
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t), o);
    CHECK(m->dl_tensor.device.device_type == kDLCUDA);
    CHECK(m->dl_tensor.device.device_id == 3);
    m->deleter(m);
  }
  SUBCASE("cuda managed and hip through Tensor::device") {
    Tensor t = make("cuda");
    t.device = {kDLCUDAManaged, 0};
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
    CHECK(m->dl_tensor.device.device_type == kDLCUDAManaged);
    m->deleter(m);
    Tensor h = make("hip");
    h.device = {kDLROCM, 1};
    DLManagedTensor* l = ToDLPack(std::move(h));
    CHECK(l->dl_tensor.device.device_type == kDLROCM);
    CHECK(l->dl_tensor.device.device_id == 1);
    l->deleter(l);
  }
  SUBCASE("pinned host may be labelled kDLCUDAHost") {
    Tensor t = make("host");
    t.device = {kDLCUDAHost, 0};
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
    CHECK(m->dl_tensor.device.device_type == kDLCUDAHost);
    m->deleter(m);
  }
  SUBCASE("level_zero needs its context and device") {
    Tensor t = make("level_zero");
    t.device = {kDLOneAPI, 0};
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kMissingContext,
                    "needs ExportOptions::level_zero_context and level_zero_device");
    ExportOptions o;
    int ctx = 0, dev = 0;
    o.level_zero_context = &ctx;
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t), o), ErrorCode::kMissingContext, "level_zero");
    o.level_zero_device = &dev;
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t), o);
    CHECK(m->dl_tensor.device.device_type == kDLOneAPI);
    m->deleter(m);
  }
  SUBCASE("a device that contradicts the space") {
    Tensor t = make("host");
    t.device = {kDLCUDA, 0};
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch,
                    "Tensor::device.device_type 2 (kDLCUDA) contradicts memory space \"host\"");
    t.device = {kDLCPU, 1};
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch,
                    "DLPack requires device_id 0");
    t.device = {kDLMetal, 0};
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch, "kDLMetal");
    Tensor g = make("cuda");
    g.device = {kDLCUDA, 1};
    ExportOptions o;
    o.device_id = 2;
    CHECK_DLB_ERROR(ToDLPackVersioned(std::move(g), o), ErrorCode::kDeviceMismatch,
                    "ExportOptions::device_id 2 contradicts Tensor::device.device_id 1");
    CHECK(t.descriptor.HasOwnership());
    CHECK(g.descriptor.HasOwnership());
  }
}

TEST_CASE("EXP-12 the deleter never reads DLTensor fields a consumer may have changed") {
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({4, 4})));
  m->dl_tensor.ndim = -7;
  m->dl_tensor.shape = nullptr;
  m->dl_tensor.strides = nullptr;
  m->dl_tensor.data = nullptr;
  m->manager_ctx = nullptr;  // even manager_ctx is not needed by dlbridge's deleter
  m->deleter(m);
  CHECK(c.calls == 1);
}

TEST_CASE("EXP-13 dtype and flags are validated on export, the hold stays on failure") {
  Buffer buf;
  ReleaseCounter c;
  Tensor t = HostTensor(buf, c, dlbridge::TensorLayout({kDLFloat, 24, 1}, {2}));
  CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kInvalidDtype,
                  "ToDLPackVersioned: dtype.bits 24 does not match code 2 (float); accepted "
                  "bits: 16, 32, 64");
  t.layout = dlbridge::TensorLayout({kDLFloat, 32, 0}, {2});
  CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kInvalidDtype, "lanes is 0");
  t.layout = F32({2});
  t.flags = uint64_t{1} << 40;
  CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kInvalidFlags,
                  "Tensor::flags has bits 0x10000000000 that DLPack");
  CHECK(t.descriptor.HasOwnership());
  CHECK(c.calls == 0);
}
