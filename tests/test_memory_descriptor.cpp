// MemoryDescriptor: description, validation and the owner/release hold (spec/lifetime.md MD-*).
#include <doctest/doctest.h>

#include <memory>
#include <thread>
#include <type_traits>

#include "counting.h"
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
