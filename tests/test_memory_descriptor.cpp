// MemoryDescriptor: description, validation and the owner/release hold (spec/lifetime.md MD-*).
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "counting.h"
#include "dlbridge/callbacks.h"
#include "dlbridge/dlbridge_c.h"
#include "dlbridge/ledger.h"
#include "dlbridge/memory_descriptor.h"

using dlbridge::ErrorCode;
using dlbridge::MemoryDescriptor;
using dlbtest::ReleaseCounter;

TEST_CASE("MD-1 defaults: host, role data, no hold") {
  MemoryDescriptor d;
  CHECK(d.GetPointer() == 0);
  CHECK(d.GetSizeInBytes() == 0);
  CHECK(std::string(d.GetMemorySpace()) == "host");
  CHECK(std::string(d.GetRole()) == "data");
  CHECK_FALSE(d.HasOwnership());
  CHECK((d.GetRelease() == nullptr));
  CHECK(d.GetReleaseContext() == nullptr);
  CHECK(d.GetReleaseAddress() == 0);
  CHECK(d.GetReleaseContextAddress() == 0);
  CHECK(d.GetOwner().get() == nullptr);
}

TEST_CASE("MD-2 Set stores every field, each space name round-trips") {
  MemoryDescriptor d;
  for (const char* space : {"host", "cuda", "hip", "level_zero"}) {
    d.Set(0x1000, 64, space, "offsets");
    CHECK(d.GetPointer() == 0x1000);
    CHECK(d.GetSizeInBytes() == 64);
    CHECK(std::string(d.GetMemorySpace()) == space);
    CHECK(std::string(d.GetRole()) == "offsets");
  }
  d.Set(0x2000, 8, "cuda");
  CHECK(std::string(d.GetRole()) == "data");
  d.SetRole("connectivity");
  CHECK(std::string(d.GetRole()) == "connectivity");
}

TEST_CASE("MD-3 unknown space names are rejected with the accepted list") {
  MemoryDescriptor d;
  CHECK_DLB_ERROR(d.SetMemorySpace("gpu"), ErrorCode::kInvalidMemorySpace,
                  "memory space \"gpu\" is unknown; accepted: \"host\", \"cuda\", \"hip\", "
                  "\"level_zero\"");
  CHECK_DLB_ERROR(d.SetMemorySpace("CUDA"), ErrorCode::kInvalidMemorySpace, "accepted");
  CHECK_DLB_ERROR(d.SetMemorySpace(static_cast<const char*>(nullptr)),
                  ErrorCode::kInvalidMemorySpace, "memory space is null");
  CHECK_DLB_ERROR(d.Set(0x10, 1, "opencl"), ErrorCode::kInvalidMemorySpace, "\"opencl\"");
  CHECK(std::string(d.GetMemorySpace()) == "host");  // unchanged after the failures
  CHECK(d.GetPointer() == 0);
}

TEST_CASE("MD-4 metal gets its own message") {
  MemoryDescriptor d;
  CHECK_DLB_ERROR(d.SetMemorySpace("metal"), ErrorCode::kInvalidMemorySpace,
                  "describe shared-storage Metal memory as \"host\"");
  CHECK_DLB_ERROR(d.SetMemorySpace("metal"), ErrorCode::kInvalidMemorySpace,
                  "private-storage Metal memory has no host-readable pointer");
}

TEST_CASE("MD-5 negative sizes and null pointers with bytes are rejected") {
  MemoryDescriptor d;
  CHECK_DLB_ERROR(d.Set(0x10, -1, "host"), ErrorCode::kInvalidDescriptor,
                  "sizeInBytes is -1; a size must be >= 0");
  CHECK_DLB_ERROR(d.Set(0, 16, "host"), ErrorCode::kInvalidDescriptor,
                  "pointer is null but sizeInBytes is 16");
  CHECK_DLB_ERROR(d.SetSizeInBytes(8), ErrorCode::kInvalidDescriptor, "the pointer is null");
  CHECK_DLB_ERROR(d.SetSizeInBytes(-5), ErrorCode::kInvalidDescriptor, "sizeInBytes is -5");
  d.Set(0x10, 16, "host");
  CHECK_DLB_ERROR(d.SetPointer(0), ErrorCode::kInvalidDescriptor, "pointer is null");
  CHECK(d.GetPointer() == 0x10);
  d.Set(0, 0, "host");  // a null pointer describing nothing is legal
  CHECK(d.GetSizeInBytes() == 0);
  CHECK_DLB_ERROR(d.SetRole(nullptr), ErrorCode::kInvalidArgument, "role is null");
}

TEST_CASE("MD-6 destroying a descriptor runs its release exactly once") {
  ReleaseCounter c;
  {
    MemoryDescriptor d;
    d.SetRelease(&ReleaseCounter::Release, &c);
    CHECK(d.HasOwnership());
    CHECK((d.GetRelease() == &ReleaseCounter::Release));
    CHECK(d.GetReleaseContext() == &c);
    CHECK(c.calls == 0);
  }
  CHECK(c.calls == 1);
}

TEST_CASE("MD-7 move-only: moving transfers the hold, overwriting drops the old one once") {
  static_assert(!std::is_copy_constructible_v<MemoryDescriptor>);
  static_assert(!std::is_copy_assignable_v<MemoryDescriptor>);
  static_assert(std::is_nothrow_move_constructible_v<MemoryDescriptor>);
  ReleaseCounter a, b;
  MemoryDescriptor d1;
  d1.Set(0x100, 4, "cuda", "values");
  d1.SetRelease(&ReleaseCounter::Release, &a);
  MemoryDescriptor d2(std::move(d1));
  CHECK_FALSE(d1.HasOwnership());
  CHECK(d2.HasOwnership());
  CHECK(std::string(d2.GetMemorySpace()) == "cuda");
  CHECK(std::string(d2.GetRole()) == "values");
  CHECK(a.calls == 0);
  MemoryDescriptor d3;
  d3.SetRelease(&ReleaseCounter::Release, &b);
  d3 = std::move(d2);  // drops b's hold, takes a's
  CHECK(b.calls == 1);
  CHECK(a.calls == 0);
  d3 = MemoryDescriptor();
  CHECK(a.calls == 1);
  CHECK(b.calls == 1);
}

// A moved-from descriptor is a new one (MD-1): it describes nothing, so it cannot dangle.
void CheckEmpty(const MemoryDescriptor& d) {
  CHECK(d.GetPointer() == 0);
  CHECK(d.GetSizeInBytes() == 0);
  CHECK(std::string(d.GetMemorySpace()) == "host");
  CHECK(std::string(d.GetRole()) == "data");
  CHECK_FALSE(d.HasOwnership());
  CHECK((d.GetRelease() == nullptr));
  CHECK(d.GetOwner().get() == nullptr);
}

TEST_CASE("MD-7 a moved-from descriptor is empty: pointer 0, size 0, host, data, no hold") {
  dlbtest::Buffer buf;
  ReleaseCounter c;
  SUBCASE("construction and assignment, release and owner holds") {
    MemoryDescriptor a;
    a.Set(0x100, 64, "cuda", "offsets");
    a.SetRelease(&ReleaseCounter::Release, &c);
    MemoryDescriptor b(std::move(a));
    CheckEmpty(a);
    CHECK(b.GetPointer() == 0x100);
    CHECK(b.GetSizeInBytes() == 64);
    CHECK(std::string(b.GetRole()) == "offsets");
    MemoryDescriptor o;
    o.Set(0x200, 8, "hip", "values");
    o.SetOwner(std::make_shared<int>(1));
    b = std::move(o);  // drops b's release once
    CHECK(c.calls == 1);
    CheckEmpty(o);
    CHECK(b.GetOwner().get() != nullptr);
    CHECK(std::string(b.GetMemorySpace()) == "hip");
  }
  SUBCASE("exporting a moved-from Tensor fails instead of describing freed memory") {
    dlbridge::Tensor source = dlbtest::HostTensor(buf, c, dlbtest::F32({4}), 16);
    dlbridge::Tensor target = std::move(source);
    CheckEmpty(source.descriptor);
    source.layout = dlbtest::F32({4});  // a caller reusing the moved-from tensor's layout
    // Re-armed so only the bounds decide: 16 bytes of layout over 0 described bytes.
    ReleaseCounter other;
    source.descriptor.SetRelease(&ReleaseCounter::Release, &other);
    CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(source)), ErrorCode::kOutOfBounds, "");
    CHECK(source.descriptor.HasOwnership());  // EXP-11: the failed export kept the hold
    CHECK(other.calls == 0);
    CHECK(c.calls == 0);  // nothing of the moved hold was released
    source.descriptor.SetRelease(nullptr, nullptr);
    CHECK(other.calls == 1);
    // Without a hold it fails too (whichever check comes first), and releases nothing.
    bool thrown = false;
    try {
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(source));
      m->deleter(m);
    } catch (const dlbridge::Error&) {
      thrown = true;
    }
    CHECK(thrown);
    CHECK(c.calls == 0);
    CHECK(target.descriptor.GetPointer() == buf.Address());
  }
  CHECK(c.calls == 1);
}

TEST_CASE("MD-8 setting a new hold drops the old one first, the forms are exclusive") {
  ReleaseCounter a, b;
  auto owner = std::make_shared<int>(7);
  MemoryDescriptor d;
  d.SetRelease(&ReleaseCounter::Release, &a);
  d.SetRelease(&ReleaseCounter::Release, &b);
  CHECK(a.calls == 1);
  d.SetOwner(owner);
  CHECK(b.calls == 1);
  CHECK(owner.use_count() == 2);
  CHECK(d.GetOwner().get() == owner.get());
  CHECK((d.GetRelease() == nullptr));
  d.SetRelease(&ReleaseCounter::Release, &a);
  CHECK(owner.use_count() == 1);
  CHECK(d.GetOwner().get() == nullptr);
  d.SetOwner(owner);
  CHECK(a.calls == 2);
  CHECK(b.calls == 1);
}

TEST_CASE("MD-9 SetRelease(nullptr) and SetOwner(nullptr) clear the hold") {
  ReleaseCounter a;
  MemoryDescriptor d;
  d.SetRelease(&ReleaseCounter::Release, &a);
  d.SetRelease(nullptr, &a);
  CHECK(a.calls == 1);
  CHECK_FALSE(d.HasOwnership());
  auto owner = std::make_shared<int>(1);
  d.SetOwner(owner);
  d.SetOwner(nullptr);
  CHECK(owner.use_count() == 1);
  CHECK_FALSE(d.HasOwnership());
}

TEST_CASE("MD-10 SetReleaseAddress takes integers and reads back as the same pair") {
  ReleaseCounter a;
  {
    MemoryDescriptor d;
    const auto fn = static_cast<int64_t>(reinterpret_cast<intptr_t>(&ReleaseCounter::Release));
    const auto ctx = static_cast<int64_t>(reinterpret_cast<intptr_t>(&a));
    d.SetReleaseAddress(fn, ctx);
    CHECK(d.HasOwnership());
    CHECK(d.GetReleaseAddress() == fn);
    CHECK(d.GetReleaseContextAddress() == ctx);
    CHECK((d.GetRelease() == &ReleaseCounter::Release));
    d.SetReleaseAddress(0, ctx);  // a null release clears (and runs the old one)
    CHECK(a.calls == 1);
    CHECK_FALSE(d.HasOwnership());
  }
  CHECK(a.calls == 1);
}

TEST_CASE("MD-11 TakeRelease hands over a release and disarms the descriptor") {
  ReleaseCounter a;
  dlbridge::ReleaseFunction fn = nullptr;
  void* ctx = nullptr;
  {
    MemoryDescriptor d;
    CHECK_FALSE(d.TakeRelease(fn, ctx));
    CHECK((fn == nullptr));
    CHECK(ctx == nullptr);
    d.SetRelease(&ReleaseCounter::Release, &a);
    CHECK(d.TakeRelease(fn, ctx));
    CHECK_FALSE(d.HasOwnership());
    CHECK_FALSE(d.TakeRelease(fn, ctx));
    CHECK((fn == nullptr));
  }
  CHECK(a.calls == 0);  // the duty moved out; destruction did not run it
  MemoryDescriptor d;
  d.SetRelease(&ReleaseCounter::Release, &a);
  REQUIRE(d.TakeRelease(fn, ctx));
  fn(ctx);
  CHECK(a.calls == 1);
}

TEST_CASE("MD-12 TakeRelease on an owner gives a pair whose one call drops the reference") {
  auto owner = std::make_shared<int>(3);
  dlbridge::ReleaseFunction fn = nullptr;
  void* ctx = nullptr;
  {
    MemoryDescriptor d;
    d.SetOwner(owner);
    REQUIRE(d.TakeRelease(fn, ctx));
    CHECK_FALSE(d.HasOwnership());
    CHECK(d.GetOwner().get() == nullptr);
  }
  CHECK(owner.use_count() == 2);  // the pair still holds it
  fn(ctx);
  CHECK(owner.use_count() == 1);
}

TEST_CASE("MD-13 a release may run on another thread (the thread that drops the hold)") {
  ReleaseCounter a;
  MemoryDescriptor d;
  d.SetRelease(&ReleaseCounter::Release, &a);
  std::thread([m = std::move(d)]() mutable { m = MemoryDescriptor(); }).join();
  CHECK(a.calls == 1);
}

TEST_CASE("MD-14 re-setting the hold already held keeps it (no early release)") {
  ReleaseCounter a;
  auto owner = std::make_shared<int>(5);
  {
    MemoryDescriptor d;
    d.SetRelease(&ReleaseCounter::Release, &a);
    d.SetReleaseAddress(d.GetReleaseAddress(), d.GetReleaseContextAddress());
    d.SetRelease(d.GetRelease(), d.GetReleaseContext());
    CHECK(a.calls == 0);
    CHECK(d.HasOwnership());
    MemoryDescriptor o;
    o.SetOwner(owner);
    o.SetOwner(o.GetOwner());  // the old reference drops, the copy keeps the owner alive
    CHECK(owner.use_count() == 2);
    CHECK(o.HasOwnership());
  }
  CHECK(a.calls == 1);
  CHECK(owner.use_count() == 1);
}

namespace {

// A release, deleter and deallocator that count their calls and then throw.
struct Thrower {
  int calls = 0;
  static void Release(void* context) {
    ++static_cast<Thrower*>(context)->calls;
    throw std::runtime_error("release threw");
  }
};
int g_deleter_calls = 0;
template <class M>
void ThrowingDeleter(M*) {
  ++g_deleter_calls;
  throw 42;  // not even a std::exception
}
int g_deallocate_calls = 0;
void* Allocate(size_t bytes) { return std::malloc(bytes); }
void ThrowingDeallocate(void* block, dlbridge::KeepAlive keep_alive) {
  ++g_deallocate_calls;
  std::free(block);
  if (keep_alive.release != nullptr) keep_alive.release(keep_alive.context);
  throw std::runtime_error("deallocate threw");
}

// Counts the swallowed exceptions a statement adds.
struct Swallowed {
  int64_t start = dlbridge::CallbackExceptionCount();
  int64_t Added() const { return dlbridge::CallbackExceptionCount() - start; }
};

}  // namespace

TEST_CASE("LT-7 a throwing release or deleter counts as run, once, and nothing escapes") {
  using dlbridge::FromDLPack;
  using dlbridge::Tensor;
  dlbtest::Buffer buf;
  Thrower t;
  Swallowed swallowed;
  g_deleter_calls = 0;
  g_deallocate_calls = 0;
  SUBCASE("descriptor destruction, overwrite, clearing and move-assignment") {
    {
      MemoryDescriptor d;
      d.SetRelease(&Thrower::Release, &t);
    }  // destruction: a noexcept path, so an escaping throw would terminate
    CHECK(t.calls == 1);
    MemoryDescriptor d;
    d.SetRelease(&Thrower::Release, &t);
    d.SetOwner(std::make_shared<int>(1));  // the old hold goes first, throwing
    CHECK(t.calls == 2);
    CHECK(d.GetOwner().get() != nullptr);  // and the new one is in place
    d.SetRelease(&Thrower::Release, &t);
    d.SetRelease(nullptr, nullptr);
    CHECK(t.calls == 3);
    d.SetRelease(&Thrower::Release, &t);
    d = MemoryDescriptor();
    CHECK(t.calls == 4);
    CHECK_FALSE(d.HasOwnership());
    CHECK(swallowed.Added() == 4);
  }
  SUBCASE("a failed import: the Error is the import's, the deleter ran once") {
    dlbtest::Versioned h(buf.bytes, {2});
    h.managed.dl_tensor.dtype.lanes = 0;  // refused
    h.managed.deleter = &ThrowingDeleter<DLManagedTensorVersioned>;
    CHECK_DLB_ERROR(FromDLPack(&h.managed), ErrorCode::kInvalidDtype, "lanes");
    CHECK(g_deleter_calls == 1);
    dlbtest::Legacy l(buf.bytes, {-1});  // refused extent
    l.managed.deleter = &ThrowingDeleter<DLManagedTensor>;
    CHECK_DLB_ERROR(FromDLPack(&l.managed), ErrorCode::kInvalidShape, "shape[0]");
    CHECK(g_deleter_calls == 2);
    CHECK(swallowed.Added() == 2);
  }
  SUBCASE("dropping an import (and a changed re-export of it)") {
    dlbtest::Versioned h(buf.bytes, {2, 2});
    h.managed.deleter = &ThrowingDeleter<DLManagedTensorVersioned>;
    { Tensor imported = FromDLPack(&h.managed); }
    CHECK(g_deleter_calls == 1);
    dlbtest::Legacy l(buf.bytes, {4});
    l.managed.deleter = &ThrowingDeleter<DLManagedTensor>;
    {
      Tensor imported = FromDLPack(&l.managed);
      imported.flags = DLPACK_FLAG_BITMASK_READ_ONLY;  // RT-3: wrapped, not handed back
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(imported));
      m->deleter(m);  // its release is the original's deleter, which throws
    }
    CHECK(g_deleter_calls == 2);
    CHECK(swallowed.Added() == 2);
  }
  SUBCASE("an export's deleter, versioned and legacy: the throw stops at the deleter") {
    Tensor a;
    a.descriptor.Set(buf.Address(), 16, "host");
    a.descriptor.SetRelease(&Thrower::Release, &t);
    a.layout = dlbtest::F32({4});
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(a));
    m->deleter(m);  // a C caller's frame cannot unwind: nothing may leave the deleter
    CHECK(t.calls == 1);
    Tensor b;
    b.descriptor.Set(buf.Address(), 16, "host");
    b.descriptor.SetRelease(&Thrower::Release, &t);
    b.layout = dlbtest::F32({4});
    DLManagedTensor* legacy = dlbridge::ToDLPack(std::move(b));
    legacy->deleter(legacy);
    CHECK(t.calls == 2);
    CHECK(swallowed.Added() == 2);
  }
  SUBCASE("an ExportAllocator's deallocate that throws") {
    Tensor a;
    a.descriptor.Set(buf.Address(), 16, "host");
    dlbtest::ReleaseCounter counter;
    a.descriptor.SetRelease(&dlbtest::ReleaseCounter::Release, &counter);
    a.layout = dlbtest::F32({4});
    dlbridge::ExportPlan plan(a);
    DLManagedTensorVersioned* m =
        plan.EmitVersioned(dlbridge::KeepAlive{&dlbtest::ReleaseCounter::Release, &counter},
                           dlbridge::ExportAllocator{&Allocate, &ThrowingDeallocate});
    dlbridge::ReleaseFunction release = nullptr;
    void* context = nullptr;
    REQUIRE(a.descriptor.TakeRelease(release, context));  // the emission holds it now
    m->deleter(m);
    CHECK(g_deallocate_calls == 1);
    CHECK(counter.calls == 1);
    CHECK(swallowed.Added() == 1);
  }
  SUBCASE("the C API: destroy, import failure, export deleter") {
    dlb_descriptor* d = nullptr;
    REQUIRE(dlb_descriptor_create(&d) == DLB_OK);
    REQUIRE(dlb_descriptor_set_release(d, &Thrower::Release, &t) == DLB_OK);
    dlb_descriptor_destroy(d);  // a void C function: nothing may come out of it
    CHECK(t.calls == 1);
    dlbtest::Versioned h(buf.bytes, {2});
    h.managed.version.major = 2;  // refused
    h.managed.deleter = &ThrowingDeleter<DLManagedTensorVersioned>;
    dlb_descriptor* out = nullptr;
    CHECK(dlb_from_dlpack_versioned(&h.managed, nullptr, &out, nullptr) ==
          DLB_ERR_UNSUPPORTED_VERSION);
    CHECK(g_deleter_calls == 1);
    dlbtest::Versioned early(buf.bytes, {2});
    early.managed.deleter = &ThrowingDeleter<DLManagedTensorVersioned>;
    CHECK(dlb_from_dlpack_versioned(&early.managed, nullptr, nullptr, nullptr) ==
          DLB_ERR_INVALID_ARGUMENT);  // consumed before FromDLPack runs (C-16)
    CHECK(g_deleter_calls == 2);
    REQUIRE(dlb_descriptor_create(&d) == DLB_OK);
    REQUIRE(dlb_descriptor_set(d, buf.Address(), 16, "host", "data") == DLB_OK);
    REQUIRE(dlb_descriptor_set_release(d, &Thrower::Release, &t) == DLB_OK);
    const int64_t shape[1] = {4};
    DLManagedTensorVersioned* m = nullptr;
    REQUIRE(dlb_to_dlpack_versioned(d, DLDataType{kDLFloat, 32, 1}, 1, shape, nullptr, 0,
                                    DLDevice{kDLCPU, 0}, 0, nullptr, &m) == DLB_OK);
    dlb_descriptor_destroy(d);
    m->deleter(m);
    CHECK(t.calls == 2);
    CHECK(swallowed.Added() == 4);
  }
  if (dlbridge::LedgerEnabled()) {  // the ledger reports the same count
    CHECK(dlbridge::GetLedgerCounts().callback_exceptions == dlbridge::CallbackExceptionCount());
  }
}
