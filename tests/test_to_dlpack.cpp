// Export rules (spec/validation.md EXP-*, spec/lifetime.md LT-*).
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "counting.h"
#include "dlbridge/device_map.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/testing.h"

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

TEST_CASE("EXP-3 no hold: refused without allow_unowned, and with it manager_ctx is NULL") {
  Buffer buf;
  Tensor t;
  t.descriptor.Set(buf.Address(), 16, "host");
  t.layout = F32({4});
  const char* message =
      "the descriptor holds nothing (no owner, no release), so nothing keeps the memory alive "
      "for the consumer; give it a hold (SetOwner or SetRelease), or set "
      "ExportOptions::allow_unowned";
  CHECK_DLB_ERROR(ToDLPackVersioned(std::move(t)), ErrorCode::kNoHold, message);
  CHECK_DLB_ERROR(ToDLPack(std::move(t)), ErrorCode::kNoHold, message);
  CHECK_DLB_ERROR(dlbridge::ExportPlan(t), ErrorCode::kNoHold, message);
  CHECK_DLB_ERROR(dlbridge::ExportPlan(t, dlbridge::ExportKind::kLegacy), ErrorCode::kNoHold,
                  message);
  CHECK(std::string(dlbridge::ErrorCodeName(ErrorCode::kNoHold)) == "kNoHold");
  CHECK(t.descriptor.GetPointer() == buf.Address());  // a refusal changes nothing
  dlbridge::ExportOptions o;
  o.allow_unowned = true;
  SUBCASE("versioned") {
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t), o);
    CHECK(m->manager_ctx == nullptr);
    CHECK(m->dl_tensor.data == buf.bytes);
    REQUIRE((m->deleter != nullptr));
    m->deleter(m);  // ASan/valgrind would flag a leak or a double free here
  }
  SUBCASE("legacy") {
    DLManagedTensor* m = ToDLPack(std::move(t), o);
    CHECK(m->manager_ctx == nullptr);
    m->deleter(m);
  }
  SUBCASE("a plan") {
    const dlbridge::ExportPlan plan(t, dlbridge::ExportKind::kVersioned, o);
    DLManagedTensorVersioned* m = plan.EmitVersioned({});
    CHECK(m->dl_tensor.data == buf.bytes);
    m->deleter(m);
  }
  SUBCASE("an owner or a release is a hold: no opt-in needed") {
    ReleaseCounter c;
    t.descriptor.SetRelease(&ReleaseCounter::Release, &c);
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(t));
    m->deleter(m);
    CHECK(c.calls == 1);
    Tensor owned;
    auto storage = std::make_shared<int>(0);
    owned.descriptor.Set(reinterpret_cast<intptr_t>(storage.get()), 4, "host");
    owned.descriptor.SetOwner(storage);
    owned.layout = F32({1});
    DLManagedTensor* l = ToDLPack(std::move(owned));
    l->deleter(l);
    CHECK(storage.use_count() == 1);
  }
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
  Tensor empty;  // no bytes at all, and no hold (EXP-3's opt-in)
  empty.layout = F32({0});
  dlbridge::ExportOptions unowned;
  unowned.allow_unowned = true;
  DLManagedTensor* l = ToDLPack(std::move(empty), unowned);
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
  try {
    (void)ToDLPack(std::move(t));
    FAIL("exported");
  } catch (const dlbridge::Error& e) {  // the advice is a value, the reason the rest (see PY-42)
    CHECK(e.advice() == dlbridge::ErrorAdvice::kUseVersioned);
    CHECK(e.reason() ==
          "ToDLPack: the tensor is read-only and a legacy DLManagedTensor cannot "
          "say so");
    CHECK(std::string(dlbridge::ErrorAdviceName(e.advice())) == "kUseVersioned");
  }
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
    CHECK(m->dl_tensor.data == buf.bytes + 12);  // element zero (EXP-17)
    CHECK(m->dl_tensor.byte_offset == 0);
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
                    "; set Tensor::device (e.g. {kDLCUDA, 0}) or ExportOptions::device_id");
    try {
      (void)ToDLPackVersioned(std::move(t));
      FAIL("exported");
    } catch (const dlbridge::Error& e) {  // the advice is a value (see PY-42)
      CHECK(e.advice() == dlbridge::ErrorAdvice::kGiveDeviceId);
      CHECK(e.advice_detail() == "kDLCUDA");
      CHECK(e.reason().find("memory space \"cuda\" needs a device ordinal and ") !=
            std::string::npos);
      CHECK(e.reason() + dlbridge::ErrorAdviceText(e.advice(), e.advice_detail()) == e.what());
    }
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
                    "the tensor's device type 2 (kDLCUDA) contradicts memory space \"host\"");
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
                    "ExportOptions::device_id 2 contradicts the tensor's device id 1");
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
                  "the tensor's flag word has bits 0x10000000000 that DLPack");
  CHECK(t.descriptor.HasOwnership());
  CHECK(c.calls == 0);
}

namespace {

// What a consumer that ignores byte_offset (PyTorch) reads: element `index` of a 1-d or 2-d
// float32 tensor from data and strides alone.
float ReadIgnoringOffset(const DLTensor& t, int64_t i, int64_t j = 0) {
  const int64_t at = i * t.strides[0] + (t.ndim > 1 ? j * t.strides[1] : 0);
  return static_cast<const float*>(t.data)[at];
}

}  // namespace

TEST_CASE(
    "EXP-17 exports put element zero in data with byte_offset 0, and keep_byte_offset keeps "
    "the split") {
  Buffer buf;
  float* values = reinterpret_cast<float*>(buf.bytes);
  for (int i = 0; i < 16; ++i) values[i] = static_cast<float>(i);
  ReleaseCounter c;
  SUBCASE("an offset view, both forms and a plan: the consumer reads [[2,3,4],[5,6,7]]") {
    DLManagedTensorVersioned* v = ToDLPackVersioned(HostTensor(buf, c, F32({2, 3}, {}, 8)));
    CHECK(v->dl_tensor.data == buf.bytes + 8);
    CHECK(v->dl_tensor.byte_offset == 0);
    CHECK(ReadIgnoringOffset(v->dl_tensor, 0, 0) == 2.0f);
    CHECK(ReadIgnoringOffset(v->dl_tensor, 1, 2) == 7.0f);
    v->deleter(v);
    DLManagedTensor* l = ToDLPack(HostTensor(buf, c, F32({2, 3}, {}, 8)));
    CHECK(l->dl_tensor.data == buf.bytes + 8);
    CHECK(l->dl_tensor.byte_offset == 0);
    CHECK(ReadIgnoringOffset(l->dl_tensor, 1, 0) == 5.0f);
    l->deleter(l);
    const Tensor t = HostTensor(buf, c, F32({2, 3}, {}, 8));
    const dlbridge::ExportPlan plan(t, dlbridge::ExportKind::kLegacy);
    DLManagedTensor* e = plan.EmitLegacy({});
    CHECK(e->dl_tensor.data == buf.bytes + 8);
    CHECK(e->dl_tensor.byte_offset == 0);
    e->deleter(e);
    CHECK(c.calls == 2);
  }
  SUBCASE("a negative-stride view: element zero is the last element in memory") {
    // values[7], values[6], ... values[0], as NumPy's a[7::-1]
    DLManagedTensorVersioned* m = ToDLPackVersioned(HostTensor(buf, c, F32({8}, {-1}, 28)));
    CHECK(m->dl_tensor.data == buf.bytes + 28);
    CHECK(m->dl_tensor.byte_offset == 0);
    CHECK(ReadIgnoringOffset(m->dl_tensor, 0) == 7.0f);
    CHECK(ReadIgnoringOffset(m->dl_tensor, 7) == 0.0f);
    m->deleter(m);
    CHECK(c.calls == 1);
  }
  SUBCASE("keep_byte_offset: the descriptor's pointer and the layout's offset, exactly") {
    ExportOptions o;
    o.keep_byte_offset = true;
    DLManagedTensorVersioned* v = ToDLPackVersioned(HostTensor(buf, c, F32({2, 3}, {}, 8)), o);
    CHECK(v->dl_tensor.data == buf.bytes);
    CHECK(v->dl_tensor.byte_offset == 8);
    v->deleter(v);
    DLManagedTensor* l = ToDLPack(HostTensor(buf, c, F32({8}, {-1}, 28)), o);
    CHECK(l->dl_tensor.data == buf.bytes);
    CHECK(l->dl_tensor.byte_offset == 28);
    l->deleter(l);
    CHECK(c.calls == 2);
  }
  SUBCASE("GPU and pinned device types are address arithmetic too") {
    ExportOptions o;
    o.device_id = 0;
    o.verify_device = dlbridge::DeviceVerification::kOff;  // no runtime: the pointer is not asked
    Tensor cuda = HostTensor(buf, c, F32({2}, {}, 12));
    cuda.descriptor.SetMemorySpace("cuda");
    DLManagedTensorVersioned* m = ToDLPackVersioned(std::move(cuda), o);
    CHECK(m->dl_tensor.device.device_type == kDLCUDA);
    CHECK(m->dl_tensor.data == buf.bytes + 12);
    CHECK(m->dl_tensor.byte_offset == 0);
    m->deleter(m);
    Tensor pinned = HostTensor(buf, c, F32({2}, {}, 12));
    pinned.device = {kDLCUDAHost, 0};
    DLManagedTensorVersioned* p = ToDLPackVersioned(std::move(pinned));
    CHECK(p->dl_tensor.data == buf.bytes + 12);
    CHECK(p->dl_tensor.byte_offset == 0);
    p->deleter(p);
    CHECK(c.calls == 2);
  }
  SUBCASE("the device table says which types: every exported one, no handle type") {
    int count = 0;
    const dlbridge::DeviceTypeInfo* rows = dlbridge::DeviceTable(&count);
    for (int i = 0; i < count; ++i) {
      CAPTURE(rows[i].name);
      if (rows[i].exported) CHECK(rows[i].address_arithmetic);
    }
    for (int32_t handle : {kDLMetal, kDLOpenCL, kDLVulkan, kDLWebGPU, kDLExtDev}) {
      CHECK_FALSE(dlbridge::FindDeviceType(handle)->address_arithmetic);
    }
    for (int32_t address :
         {kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged, kDLROCM, kDLROCMHost, kDLOneAPI}) {
      CHECK(dlbridge::FindDeviceType(address)->address_arithmetic);
    }
  }
}

TEST_CASE("MD-15 a MemorySpace value outside the enum is refused by SetMemorySpace") {
  dlbridge::MemoryDescriptor d;
  d.SetMemorySpace(dlbridge::MemorySpace::kCuda);
  CHECK(d.GetMemorySpaceKind() == dlbridge::MemorySpace::kCuda);
  for (int value : {4, -1, 1000}) {
    CAPTURE(value);
    CHECK_DLB_ERROR(
        d.SetMemorySpace(static_cast<dlbridge::MemorySpace>(value)), ErrorCode::kInvalidMemorySpace,
        "MemoryDescriptor::SetMemorySpace: memory space value " + std::to_string(value) +
            " is not a MemorySpace; accepted: 0 (\"host\"), 1 (\"cuda\"), 2 "
            "(\"hip\"), 3 (\"level_zero\")");
    CHECK(d.GetMemorySpaceKind() == dlbridge::MemorySpace::kCuda);  // unchanged
  }
  // Every value of the enum is accepted.
  for (dlbridge::MemorySpace space : {dlbridge::MemorySpace::kHost, dlbridge::MemorySpace::kHip,
                                      dlbridge::MemorySpace::kLevelZero}) {
    d.SetMemorySpace(space);
    CHECK(d.GetMemorySpaceKind() == space);
  }
}

// LT-8: the spare export block serves one live export at a time, and is what the next export
// gets once a deleter (or an import taking its export back: RT-6) has given it back.
TEST_CASE("LT-8 the spare export block is reused, never shared by two live exports") {
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* a = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({2, 3})));
  a->deleter(a);
  DLManagedTensorVersioned* b = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({4})));
  DLManagedTensorVersioned* d = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({5, 1, 2})));
  if (dlbridge::testing::SpareExportBlock()) {
    CHECK(b == a);  // the block a's deleter gave back
  }
  CHECK(b != d);
  // Writing d changed nothing of b.
  REQUIRE(b->dl_tensor.ndim == 1);
  CHECK(b->dl_tensor.shape[0] == 4);
  CHECK(b->dl_tensor.strides[0] == 1);
  REQUIRE(d->dl_tensor.ndim == 3);
  CHECK(d->dl_tensor.shape[0] == 5);
  CHECK(d->dl_tensor.strides[0] == 2);
  b->deleter(b);
  // An import that takes its export back gives the block back too.
  dlbridge::Tensor back = dlbridge::FromDLPack(d);
  DLManagedTensorVersioned* e = dlbridge::ToDLPackVersioned(std::move(back));
  if (dlbridge::testing::SpareExportBlock()) {
    CHECK(e == d);
  }
  CHECK(e->dl_tensor.ndim == 3);
  CHECK(e->dl_tensor.shape[2] == 2);
  e->deleter(e);
  // Nine dimensions: a block of its own size, never the spare; a legacy block fits the spare.
  DLManagedTensor* legacy = dlbridge::ToDLPack(HostTensor(buf, c, F32({2, 2})));
  DLManagedTensorVersioned* nine =
      dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({1, 1, 1, 1, 1, 1, 1, 2, 2})));
  CHECK(static_cast<void*>(nine) != static_cast<void*>(legacy));
  CHECK(nine->dl_tensor.shape[8] == 2);
  nine->deleter(nine);
  legacy->deleter(legacy);
  CHECK(c.calls == 5);  // a, b, d (taken back as e), legacy, nine
}

TEST_CASE("LT-8 the last block given back waits, and a second deleter call on it is ignored") {
  if (!dlbridge::testing::SpareExportBlock()) {
    MESSAGE("this build keeps no spare export block (ledger or ASan)");
    return;
  }
  Buffer buf;
  ReleaseCounter c;
  DLManagedTensorVersioned* a = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({2})));
  DLManagedTensorVersioned* b = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({3})));
  a->deleter(a);
  b->deleter(b);  // displaces a's block (freed)
  b->deleter(b);  // a second call, on the waiting block: ignored
  CHECK(c.calls == 2);
  DLManagedTensorVersioned* n = dlbridge::ToDLPackVersioned(HostTensor(buf, c, F32({4})));
  CHECK(n == b);
  CHECK(n->dl_tensor.shape[0] == 4);
  n->deleter(n);
  CHECK(c.calls == 3);
}
