// GPU runtime backends without a GPU (spec/device-map.md GPU-*): each backend's missing
// library, the CUDA toolkit's stub, the Level Zero loader without a driver, HIP without a
// device, and (through fake runtimes) export id resolution and import verification.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "counting.h"
#include "dlbridge/testing.h"
#include "platform.h"

using dlbridge::DeviceVerification;
using dlbridge::ErrorCode;
using dlbridge::GpuRuntime;
using dlbridge::MemorySpace;
using dlbridge::PointerInfo;
using dlbridge::PointerKind;
using dlbridge::RuntimeStatus;
using dlbridge::testing::PointerQueryCount;
using namespace dlbtest;

namespace {

// Restores every runtime to its default library and no fake, and clears the process-wide
// Level Zero context, when a test ends.
struct RuntimeReset {
  RuntimeReset() { Clear(); }
  ~RuntimeReset() { Clear(); }
  static void Clear() {
    for (GpuRuntime r : {GpuRuntime::kCuda, GpuRuntime::kHip, GpuRuntime::kLevelZero}) {
      dlbridge::testing::SetFakeRuntime(r, nullptr);
    }
    dlbridge::SetLevelZeroContext(nullptr, nullptr);
  }
  static void UseLibrary(GpuRuntime r, const char* library) {
    dlbridge::testing::SetRuntimeLibrary(r, library);
  }
  RuntimeReset(const RuntimeReset&) = delete;
};

// A model runtime: ranges of host addresses it "knows", each with a kind and an ordinal.
struct FakeRuntime : dlbridge::testing::FakeRuntime {
  struct Range {
    uintptr_t begin, end;
    PointerInfo info;
  };
  std::vector<Range> ranges;
  std::map<void*, int32_t> ze_devices;  // Level Zero device handle -> root index
  mutable std::vector<void*> contexts_seen;

  void Add(const void* begin, size_t bytes, PointerKind kind, int32_t ordinal, void* ze = nullptr) {
    const auto b = reinterpret_cast<uintptr_t>(begin);
    ranges.push_back({b, b + bytes, PointerInfo{kind, ordinal, ze}});
  }
  PointerInfo Query(const void* pointer, void* context) const override {
    contexts_seen.push_back(context);
    const auto p = reinterpret_cast<uintptr_t>(pointer);
    for (const Range& r : ranges) {
      if (p >= r.begin && p < r.end) return r.info;
    }
    return PointerInfo{};  // kUnknown, like CUDA's type 0
  }
  int32_t LevelZeroDeviceIndex(void* device) const override {
    auto it = ze_devices.find(device);
    return it == ze_devices.end() ? -1 : it->second;
  }
};

dlbridge::Tensor Make(Buffer& buf, ReleaseCounter& c, const char* space, int64_t offset = 0) {
  dlbridge::Tensor t = HostTensor(buf, c, F32({4}));
  t.descriptor.Set(buf.Address() + offset, 16, space);  // the hold is untouched
  return t;
}

DLDevice ExportDevice(dlbridge::Tensor t, const dlbridge::ExportOptions& o = {}) {
  DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), o);
  const DLDevice d = m->dl_tensor.device;
  m->deleter(m);
  return d;
}

std::string Message(const dlbridge::RuntimeInfo& info) { return info.message; }

}  // namespace

TEST_CASE("GPU-1 a missing runtime library is named, and the library still works") {
  RuntimeReset reset;
  const std::pair<GpuRuntime, const char*> cases[] = {
      {GpuRuntime::kCuda, "/nonexistent/libcuda.so.1"},
      {GpuRuntime::kHip, "/nonexistent/libamdhip64.so.6"},
      {GpuRuntime::kLevelZero, "/nonexistent/libze_loader.so.1"},
  };
  const bool built[] = {DLBRIDGE_TEST_WITH_CUDA != 0, DLBRIDGE_TEST_WITH_HIP != 0,
                        DLBRIDGE_TEST_WITH_LEVEL_ZERO != 0};
  for (const auto& entry : cases) {
    const GpuRuntime runtime = entry.first;
    const char* library = entry.second;
    CAPTURE(dlbridge::GpuRuntimeName(runtime));
    RuntimeReset::UseLibrary(runtime, library);
    const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(runtime);
    if (!built[static_cast<int>(runtime)]) {
      CHECK(info.status == RuntimeStatus::kNotBuilt);
      CHECK(Message(info).find("switched off") != std::string::npos);
      continue;
    }
    CHECK(info.status == RuntimeStatus::kNotInstalled);
    CHECK(info.library == library);
    CHECK_MESSAGE(
        Message(info).find(std::string(library) + " is not installed") != std::string::npos,
        Message(info));
    CHECK_MESSAGE(Message(info).find("install") != std::string::npos, Message(info));
    CHECK_MESSAGE(Message(info).find("give the device id") != std::string::npos, Message(info));
    int context = 0;
    const MemorySpace space = runtime == GpuRuntime::kCuda  ? MemorySpace::kCuda
                              : runtime == GpuRuntime::kHip ? MemorySpace::kHip
                                                            : MemorySpace::kLevelZero;
    CHECK_DLB_ERROR(dlbridge::QueryPointer(space, &context, &context),
                    ErrorCode::kRuntimeUnavailable, library);
  }
  // Host memory needs no runtime; GPU exports with a given id work as before.
  Buffer buf;
  ReleaseCounter c;
  CHECK(ExportDevice(Make(buf, c, "host")).device_type == kDLCPU);
  dlbridge::ExportOptions o;
  o.device_id = 2;
  CHECK(ExportDevice(Make(buf, c, "cuda"), o).device_id == 2);
  CHECK(c.calls == 2);
}

TEST_CASE("GPU-1 export without a device id keeps kMissingDeviceId and names the missing runtime") {
  RuntimeReset reset;
  Buffer buf;
  ReleaseCounter c;
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, "/nonexistent/libcuda.so.1");
  RuntimeReset::UseLibrary(GpuRuntime::kHip, "/nonexistent/libamdhip64.so.6");
  dlbridge::Tensor t = Make(buf, c, "cuda");
  CHECK_DLB_ERROR(
      dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kMissingDeviceId,
      "memory space \"cuda\" needs a device ordinal and it could not be read from the pointer");
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kMissingDeviceId,
                  DLBRIDGE_TEST_WITH_CUDA ? "/nonexistent/libcuda.so.1 is not installed"
                                          : "DLBRIDGE_WITH_CUDA=OFF");
  CHECK(t.descriptor.HasOwnership());
  dlbridge::Tensor h = Make(buf, c, "hip");
  CHECK_DLB_ERROR(dlbridge::ToDLPack(std::move(h)), ErrorCode::kMissingDeviceId,
                  DLBRIDGE_TEST_WITH_HIP ? "/nonexistent/libamdhip64.so.6 is not installed"
                                         : "DLBRIDGE_WITH_HIP=OFF");
  CHECK(c.calls == 0);
}

TEST_CASE("GPU-1 the library can be named through DLBRIDGE_CUDA_LIBRARY") {
  RuntimeReset reset;
  if (!DLBRIDGE_TEST_WITH_CUDA) return;
  dlbridge::RuntimeInfo info;
  {
    ScopedEnv env("DLBRIDGE_CUDA_LIBRARY", "/nonexistent/from-env/libcuda.so.1");
    RuntimeReset::UseLibrary(GpuRuntime::kCuda,
                             nullptr);  // defaults: the variable, then the platform's name
    info = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  }
  CHECK(info.status == RuntimeStatus::kNotInstalled);
  CHECK(info.library == "/nonexistent/from-env/libcuda.so.1");
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, nullptr);
  const dlbridge::RuntimeInfo fallback = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  if (fallback.status == RuntimeStatus::kNotInstalled) {
    // The default name, when no driver is here: libcuda.so.1, or nvcuda.dll on Windows.
    CHECK(fallback.library == DLBTEST_CUDA_DEFAULT_LIBRARY);
    CHECK(Message(fallback).find(DLBTEST_CUDA_DEFAULT_LIBRARY " is not installed") !=
          std::string::npos);
  }
}

TEST_CASE("PKG-10 a library that does not load is named with the system's reason") {
  RuntimeReset reset;
  if (!DLBRIDGE_TEST_WITH_CUDA) return;
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, "/nonexistent/dir/fake-driver-library");
  const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  CHECK(info.status == RuntimeStatus::kNotInstalled);
#ifdef _WIN32
  // FormatMessage's text for ERROR_MOD_NOT_FOUND or ERROR_PATH_NOT_FOUND, and the number.
  CHECK_MESSAGE(Message(info).find("(/nonexistent/dir/fake-driver-library: ") != std::string::npos,
                Message(info));
  CHECK_MESSAGE(Message(info).find("(Windows error ") != std::string::npos, Message(info));
#else
  CHECK_MESSAGE(Message(info).find("/nonexistent/dir/fake-driver-library: cannot open shared "
                                   "object file: No such file or directory") != std::string::npos,
                Message(info));
#endif
}

#ifdef DLBRIDGE_TEST_FAKE_CUDA
TEST_CASE("PKG-10 a runtime library in the current directory is not loaded by its default name") {
  RuntimeReset reset;
  ScopedEnv env("DLBRIDGE_CUDA_LIBRARY", nullptr);
  namespace fs = std::filesystem;
  // A name of its own, so that builds testing at once (shared and static lanes) never meet.
  const fs::path dir =
      fs::temp_directory_path() / ("dlbridge-pkg10-" + std::to_string(std::random_device{}()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path previous = fs::current_path();
  fs::current_path(dir);
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, nullptr);
  const dlbridge::RuntimeInfo before = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  // A working fake CUDA driver under the default name, where a planted library would be.
  fs::copy_file(DLBRIDGE_TEST_FAKE_CUDA, dir / DLBTEST_CUDA_DEFAULT_LIBRARY);
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, nullptr);
  const dlbridge::RuntimeInfo after = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, nullptr);
  fs::current_path(previous);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  if (before.status != RuntimeStatus::kNotInstalled) {
    MESSAGE("a CUDA driver is installed here: nothing to tell a planted copy from");
    return;
  }
  CHECK_MESSAGE(after.status == RuntimeStatus::kNotInstalled, Message(after));
  CHECK(after.library == DLBTEST_CUDA_DEFAULT_LIBRARY);
}
#endif

TEST_CASE("GPU-1 the first use from many threads loads each runtime once") {
  RuntimeReset reset;
  for (GpuRuntime r : {GpuRuntime::kCuda, GpuRuntime::kHip, GpuRuntime::kLevelZero}) {
    RuntimeReset::UseLibrary(r, nullptr);
  }
  std::vector<std::thread> threads;
  std::vector<int> statuses(24, -1);
  for (int i = 0; i < 24; ++i) {
    threads.emplace_back([i, &statuses] {
      const GpuRuntime r = static_cast<GpuRuntime>(i % 3);
      statuses[i] = static_cast<int>(dlbridge::GetRuntimeInfo(r).status);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 3; i < 24; ++i) CHECK(statuses[i] == statuses[i % 3]);
}

TEST_CASE("GPU-2 the CUDA toolkit's stub library is recognised and named") {
  RuntimeReset reset;
#ifndef DLBRIDGE_TEST_CUDA_STUB
  MESSAGE(
      "no CUDA toolkit stub this target can load (lib64/stubs/libcuda.so, a Linux library "
      "for the target's processor) found at configure time");
#else
  RuntimeReset::UseLibrary(GpuRuntime::kCuda, DLBRIDGE_TEST_CUDA_STUB);
  const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(GpuRuntime::kCuda);
  CHECK(info.status == RuntimeStatus::kStubLibrary);
  CHECK(info.library == DLBRIDGE_TEST_CUDA_STUB);
  CHECK_MESSAGE(Message(info).find("CUDA_ERROR_STUB_LIBRARY") != std::string::npos, Message(info));
  CHECK_MESSAGE(Message(info).find("install the NVIDIA driver") != std::string::npos,
                Message(info));
  CHECK_MESSAGE(Message(info).find("lib64/stubs") != std::string::npos, Message(info));
  Buffer buf;
  ReleaseCounter c;
  CHECK_DLB_ERROR(dlbridge::QueryPointer(MemorySpace::kCuda, buf.bytes), ErrorCode::kStubLibrary,
                  "link-time stub");
  dlbridge::Tensor t = Make(buf, c, "cuda");
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kMissingDeviceId,
                  "CUDA_ERROR_STUB_LIBRARY");
  // A given id exports unchecked where the runtime cannot answer (kWhereAvailable)...
  t.device = {kDLCUDA, 0};
  const uint64_t before = PointerQueryCount();
  CHECK(ExportDevice(std::move(t)).device_type == kDLCUDA);
  CHECK(PointerQueryCount() == before);
  // ... and fails with the stub's own error when verification is required.
  Versioned v(buf.bytes, {4});
  v.T().device = {kDLCUDA, 0};
  dlbridge::ImportOptions io;
  io.verify_device = DeviceVerification::kRequired;
  CHECK_DLB_ERROR(dlbridge::FromDLPack(&v.managed, io), ErrorCode::kStubLibrary,
                  "ImportOptions::verify_device is kRequired but CUDA:");
  CHECK(v.deletes == 1);
#endif
}

TEST_CASE("GPU-7 the Level Zero loader without a driver reports no driver") {
  RuntimeReset reset;
#if !DLBRIDGE_TEST_WITH_LEVEL_ZERO || !defined(DLBRIDGE_TEST_ZE_INSTALLED)
  MESSAGE("Level Zero backend off or libze_loader.so.1 not installed (Debian: libze1)");
#else
  RuntimeReset::UseLibrary(GpuRuntime::kLevelZero, nullptr);
  const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(GpuRuntime::kLevelZero);
  if (info.status == RuntimeStatus::kReady) {
    MESSAGE("a Level Zero driver is installed here: the no-driver path cannot be checked");
    return;
  }
  CHECK(info.status == RuntimeStatus::kNoDevice);
  CHECK(info.library == "libze_loader.so.1");
  CHECK_MESSAGE(Message(info).find("found no driver") != std::string::npos, Message(info));
  CHECK_MESSAGE(Message(info).find("install a GPU driver") != std::string::npos, Message(info));
  Buffer buf;
  int context = 0, device = 0;
  CHECK_DLB_ERROR(dlbridge::QueryPointer(MemorySpace::kLevelZero, buf.bytes, &context),
                  ErrorCode::kNoDevice, "found no driver");
  CHECK_DLB_ERROR(dlbridge::QueryPointer(MemorySpace::kLevelZero, buf.bytes),
                  ErrorCode::kMissingContext, "needs a context");
  // Without a driver, a caller-supplied context is taken as given...
  Versioned v(buf.bytes, {4});
  v.T().device = {kDLOneAPI, 0};
  dlbridge::ImportOptions io;
  io.level_zero_context = &context;
  { dlbridge::Tensor t = dlbridge::FromDLPack(&v.managed, io); }
  CHECK(v.deletes == 1);
  // ... unless verification is required.
  Versioned w(buf.bytes, {4});
  w.T().device = {kDLOneAPI, 0};
  io.verify_device = DeviceVerification::kRequired;
  CHECK_DLB_ERROR(dlbridge::FromDLPack(&w.managed, io), ErrorCode::kNoDevice, "found no driver");
  // An export without an id cannot be resolved either.
  ReleaseCounter c;
  dlbridge::ExportOptions eo;
  eo.level_zero_context = &context;
  eo.level_zero_device = &device;
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(Make(buf, c, "level_zero"), eo),
                  ErrorCode::kMissingDeviceId,
                  "Level Zero: the loader libze_loader.so.1 found no driver");
#endif
}

TEST_CASE("GPU-7 a HIP runtime without a device reports no device") {
  RuntimeReset reset;
#if !DLBRIDGE_TEST_WITH_HIP || !defined(DLBRIDGE_TEST_HIP_INSTALLED)
  MESSAGE("HIP backend off or libamdhip64 not installed (Debian: libamdhip64-dev)");
#else
  RuntimeReset::UseLibrary(GpuRuntime::kHip, nullptr);
  const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(GpuRuntime::kHip);
  if (info.status == RuntimeStatus::kReady) {
    MESSAGE("an AMD GPU is present: the no-device path cannot be checked");
    return;
  }
  CHECK(info.status == RuntimeStatus::kNoDevice);
  CHECK(info.library.find("libamdhip64.so.") == 0);
  CHECK(info.version >= 50000000);  // hipRuntimeGetVersion answers without a device
  CHECK_MESSAGE(Message(info).find("reports no AMD GPU") != std::string::npos, Message(info));
  CHECK_MESSAGE(Message(info).find("rocminfo") != std::string::npos, Message(info));
  Buffer buf;
  ReleaseCounter c;
  CHECK_DLB_ERROR(dlbridge::QueryPointer(MemorySpace::kHip, buf.bytes), ErrorCode::kNoDevice,
                  "reports no AMD GPU");
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(Make(buf, c, "hip")), ErrorCode::kMissingDeviceId,
                  "memory space \"hip\" needs a device ordinal");
  dlbridge::ExportOptions eo;
  eo.device_id = 0;
  eo.verify_device = DeviceVerification::kRequired;
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(Make(buf, c, "hip"), eo), ErrorCode::kNoDevice,
                  "ExportOptions::verify_device is kRequired but HIP:");
  CHECK(c.calls == 2);  // both temporaries kept their hold through the failure, then dropped it
#endif
}

TEST_CASE("GPU-5 import verification on and off (fake CUDA, HIP and Level Zero runtimes)") {
  RuntimeReset reset;
  Buffer buf;
  FakeRuntime cuda;
  cuda.Add(buf.bytes, 256, PointerKind::kDevice, 1);
  cuda.Add(buf.bytes + 256, 256, PointerKind::kManaged, 0);
  cuda.Add(buf.bytes + 512, 256, PointerKind::kPinnedHost, 0);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kCuda, &cuda);
  auto import = [&](int64_t offset, DLDevice device, DeviceVerification verify) {
    Versioned v(buf.bytes + offset, {4});
    v.T().device = device;
    dlbridge::ImportOptions io;
    io.verify_device = verify;
    { dlbridge::Tensor t = dlbridge::FromDLPack(&v.managed, io); }
    return v.deletes;
  };
  const auto on = DeviceVerification::kWhereAvailable;
  const auto off = DeviceVerification::kOff;
  CHECK(import(0, {kDLCUDA, 1}, on) == 1);    // device memory of device 1
  CHECK(import(256, {kDLCUDA, 3}, on) == 1);  // managed: any device may address it
  CHECK(import(256, {kDLCUDAManaged, 0}, on) == 1);
  CHECK(import(512, {kDLCUDAHost, 0}, on) == 1);  // host types are not asked about
  CHECK(import(1024, {kDLCPU, 0}, on) == 1);

  struct Bad {
    int64_t offset;
    DLDevice device;
    ErrorCode code;
    const char* text;
  };
  const Bad bad[] = {
      {0,
       {kDLCUDA, 0},
       ErrorCode::kDeviceMismatch,
       "device_id 0 (kDLCUDA) contradicts the CUDA runtime: pointer"},
      {0, {kDLCUDAManaged, 0}, ErrorCode::kDeviceMismatch, "is device memory, not managed memory"},
      {512,
       {kDLCUDA, 0},
       ErrorCode::kDeviceMismatch,
       "is pinned host memory; the producer should say kDLCUDAHost"},
      {1024,
       {kDLCUDA, 0},
       ErrorCode::kUnknownPointer,
       "is not memory the CUDA runtime knows (pageable host memory"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.text);
    Versioned v(buf.bytes + b.offset, {4});
    v.T().device = b.device;
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&v.managed), b.code, b.text);
    CHECK(v.deletes == 1);
    // Switched off, the same tensor imports as given, and no query runs.
    const uint64_t before = PointerQueryCount();
    CHECK(import(b.offset, b.device, off) == 1);
    CHECK(PointerQueryCount() == before);
  }
  // The queried address is the lowest byte the tensor reaches (data + byte_offset).
  {
    Versioned v(buf.bytes, {4});
    v.T().device = {kDLCUDA, 1};
    v.T().byte_offset = 1024;  // past the fake's device range
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&v.managed), ErrorCode::kUnknownPointer, "CUDA");
  }

  FakeRuntime hip;
  hip.Add(buf.bytes, 256, PointerKind::kDevice, 0);
  hip.Add(buf.bytes + 512, 256, PointerKind::kUnregisteredHost, -1);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kHip, &hip);
  CHECK(import(0, {kDLROCM, 0}, on) == 1);
  CHECK(import(512, {kDLROCMHost, 0}, on) == 1);
  {
    Versioned v(buf.bytes, {4});
    v.T().device = {kDLROCM, 2};
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&v.managed), ErrorCode::kDeviceMismatch,
                    "contradicts the HIP runtime");
    Versioned u(buf.bytes + 512, {4});
    u.T().device = {kDLROCM, 0};
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&u.managed), ErrorCode::kUnknownPointer,
                    "(unregistered host memory)");
  }

  FakeRuntime ze;
  int context = 0, other = 0, zeDevice = 0;
  ze.Add(buf.bytes, 256, PointerKind::kDevice, 1, &zeDevice);
  ze.Add(buf.bytes + 256, 256, PointerKind::kPinnedHost, -1);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kLevelZero, &ze);
  auto importZe = [&](int64_t offset, int32_t id, void* ctx) {
    Versioned v(buf.bytes + offset, {4});
    v.T().device = {kDLOneAPI, id};
    dlbridge::ImportOptions io;
    io.level_zero_context = ctx;
    { dlbridge::Tensor t = dlbridge::FromDLPack(&v.managed, io); }
    return v.deletes;
  };
  CHECK(importZe(0, 1, &context) == 1);
  CHECK(ze.contexts_seen.back() == &context);  // the caller's context is what is asked
  CHECK(importZe(256, 7, &context) == 1);      // host USM: no device to compare
  {
    Versioned v(buf.bytes, {4});
    v.T().device = {kDLOneAPI, 0};
    dlbridge::ImportOptions io;
    io.level_zero_context = &context;
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&v.managed, io), ErrorCode::kDeviceMismatch,
                    "contradicts the Level Zero runtime");
    Versioned u(buf.bytes + 1024, {4});
    u.T().device = {kDLOneAPI, 0};
    io.level_zero_context = &other;
    CHECK_DLB_ERROR(dlbridge::FromDLPack(&u.managed, io), ErrorCode::kUnknownPointer,
                    "is not an allocation of Level Zero context");
  }
  // The process-wide context serves when the options name none.
  dlbridge::SetLevelZeroContext(&other, &zeDevice);
  CHECK(importZe(0, 1, nullptr) == 1);
  CHECK(ze.contexts_seen.back() == &other);
}

TEST_CASE("GPU-2 export resolves the device id from the pointer (fake runtimes)") {
  RuntimeReset reset;
  Buffer buf;
  ReleaseCounter c;
  FakeRuntime cuda;
  cuda.Add(buf.bytes, 256, PointerKind::kDevice, 2);
  cuda.Add(buf.bytes + 256, 256, PointerKind::kManaged, 1);
  cuda.Add(buf.bytes + 512, 256, PointerKind::kPinnedHost, 0);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kCuda, &cuda);

  DLDevice d = ExportDevice(Make(buf, c, "cuda"));
  CHECK(d.device_type == kDLCUDA);
  CHECK(d.device_id == 2);
  // GPU-3: managed memory without an id is kDLCUDAManaged 0; with one, kDLCUDA of that id.
  d = ExportDevice(Make(buf, c, "cuda", 256));
  CHECK(d.device_type == kDLCUDAManaged);
  CHECK(d.device_id == 0);
  dlbridge::ExportOptions one;
  one.device_id = 3;
  d = ExportDevice(Make(buf, c, "cuda", 256), one);
  CHECK(d.device_type == kDLCUDA);
  CHECK(d.device_id == 3);
  // GPU-4: pinned host memory described as "cuda" exports as kDLCUDAHost 0.
  d = ExportDevice(Make(buf, c, "cuda", 512));
  CHECK(d.device_type == kDLCUDAHost);
  CHECK(d.device_id == 0);
  CHECK(c.calls == 4);

  dlbridge::Tensor t = Make(buf, c, "cuda", 512);
  t.device = {kDLCUDA, 0};
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch,
                  "is pinned host memory; describe it as \"host\"");
  t = Make(buf, c, "cuda", 0);
  t.device = {kDLCUDA, 0};
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch,
                  "device_id 0 contradicts the CUDA runtime: pointer");
  t.device = {kDLCUDAManaged, 0};
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kDeviceMismatch,
                  "is device memory, not managed memory");
  t = Make(buf, c, "cuda", 1024);
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(t)), ErrorCode::kUnknownPointer,
                  "is not memory the CUDA runtime knows");
  CHECK(t.descriptor.HasOwnership());  // failures keep the hold
  // An empty descriptor has no pointer to ask about.
  dlbridge::Tensor empty;
  empty.descriptor.Set(0, 0, "cuda");
  empty.layout = F32({0});
  dlbridge::ExportOptions unowned;  // nothing to hold: zero bytes
  unowned.allow_unowned = true;
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(std::move(empty), unowned),
                  ErrorCode::kMissingDeviceId, "an empty descriptor has no pointer");

  FakeRuntime hip;
  hip.Add(buf.bytes, 256, PointerKind::kDevice, 1);
  hip.Add(buf.bytes + 256, 256, PointerKind::kManaged, 2);
  hip.Add(buf.bytes + 512, 256, PointerKind::kPinnedHost, 0);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kHip, &hip);
  d = ExportDevice(Make(buf, c, "hip"));
  CHECK(d.device_type == kDLROCM);
  CHECK(d.device_id == 1);
  d = ExportDevice(Make(buf, c, "hip", 256));  // no managed type in DLPack: kDLROCM, its device
  CHECK(d.device_type == kDLROCM);
  CHECK(d.device_id == 2);
  d = ExportDevice(Make(buf, c, "hip", 512));
  CHECK(d.device_type == kDLROCMHost);

  FakeRuntime ze;
  int context = 0, dev0 = 0, dev1 = 0;
  ze.Add(buf.bytes, 256, PointerKind::kDevice, 1, &dev1);
  ze.Add(buf.bytes + 256, 256, PointerKind::kPinnedHost, -1);
  ze.ze_devices = {{&dev0, 0}, {&dev1, 1}};
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kLevelZero, &ze);
  dlbridge::ExportOptions eo;
  eo.level_zero_context = &context;
  eo.level_zero_device = &dev1;
  d = ExportDevice(Make(buf, c, "level_zero"), eo);
  CHECK(d.device_type == kDLOneAPI);
  CHECK(d.device_id == 1);
  eo.level_zero_device = &dev0;  // host USM: the id is the caller's device's
  d = ExportDevice(Make(buf, c, "level_zero", 256), eo);
  CHECK(d.device_type == kDLOneAPI);
  CHECK(d.device_id == 0);
  CHECK_DLB_ERROR(dlbridge::ToDLPackVersioned(Make(buf, c, "level_zero", 1024), eo),
                  ErrorCode::kUnknownPointer, "is not an allocation of Level Zero context");
  // Once per process instead of in every ExportOptions.
  dlbridge::SetLevelZeroContext(&context, &dev1);
  d = ExportDevice(Make(buf, c, "level_zero"));
  CHECK(d.device_id == 1);
  CHECK(ze.contexts_seen.back() == &context);
  CHECK(c.calls == 13);  // 11 exports, plus the two tensors `t` replaced
}

TEST_CASE("GPU-8 no pointer query runs when the device id is given and verification is off") {
  RuntimeReset reset;
  Buffer buf;
  ReleaseCounter c;
  FakeRuntime cuda;
  cuda.Add(buf.bytes, 256, PointerKind::kDevice, 0);
  dlbridge::testing::SetFakeRuntime(GpuRuntime::kCuda, &cuda);
  dlbridge::ExportOptions eo;
  eo.device_id = 0;
  uint64_t before = PointerQueryCount();
  ExportDevice(Make(buf, c, "cuda"), eo);  // verified: one query
  CHECK(PointerQueryCount() == before + 1);
  eo.verify_device = DeviceVerification::kOff;
  before = PointerQueryCount();
  for (int i = 0; i < 10; ++i) ExportDevice(Make(buf, c, "cuda"), eo);
  dlbridge::Tensor t = Make(buf, c, "cuda");
  t.device = {kDLCUDA, 5};  // wrong, but not checked
  eo.device_id = -1;
  CHECK(ExportDevice(std::move(t), eo).device_id == 5);
  CHECK(PointerQueryCount() == before);
  // Without an id the query is needed even with verification off.
  CHECK(ExportDevice(Make(buf, c, "cuda"), eo).device_id == 0);
  CHECK(PointerQueryCount() == before + 1);

  before = PointerQueryCount();
  for (int i = 0; i < 10; ++i) {
    Versioned v(buf.bytes, {4});
    v.T().device = {kDLCUDA, 0};
    dlbridge::ImportOptions io;
    io.verify_device = DeviceVerification::kOff;
    dlbridge::Tensor back = dlbridge::FromDLPack(&v.managed, io);
  }
  CHECK(PointerQueryCount() == before);
  {
    Versioned v(buf.bytes, {4});
    v.T().device = {kDLCUDA, 0};
    dlbridge::Tensor back = dlbridge::FromDLPack(&v.managed);  // default: verified
  }
  CHECK(PointerQueryCount() == before + 1);
  // Host memory is never asked about.
  before = PointerQueryCount();
  ExportDevice(Make(buf, c, "host"));
  CHECK(PointerQueryCount() == before);
}

TEST_CASE("GPU-6 HIP memory types are read by the runtime's major version") {
  using dlbridge::testing::HipPointerKind;
  // ROCm 5: hipMemoryTypeHost 0, Device 1, Array 2, Unified 3, Managed 4.
  CHECK(HipPointerKind(5, 0, false) == PointerKind::kPinnedHost);
  CHECK(HipPointerKind(5, 1, false) == PointerKind::kDevice);
  CHECK(HipPointerKind(5, 2, false) == PointerKind::kDevice);
  CHECK(HipPointerKind(5, 4, false) == PointerKind::kManaged);
  // ROCm 6: Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11.
  CHECK(HipPointerKind(6, 0, false) == PointerKind::kUnregisteredHost);
  CHECK(HipPointerKind(6, 1, false) == PointerKind::kPinnedHost);
  CHECK(HipPointerKind(6, 2, false) == PointerKind::kDevice);
  CHECK(HipPointerKind(6, 3, false) == PointerKind::kManaged);
  CHECK(HipPointerKind(6, 10, false) == PointerKind::kDevice);
  CHECK(HipPointerKind(7, 1, false) == PointerKind::kPinnedHost);
  // isManaged wins in both.
  CHECK(HipPointerKind(5, 1, true) == PointerKind::kManaged);
  CHECK(HipPointerKind(6, 2, true) == PointerKind::kManaged);
  CHECK(HipPointerKind(5, 99, false) == PointerKind::kUnknown);
}

TEST_CASE("GPU-9 runtime errors have their own codes and a backend switched off says so") {
  CHECK(std::string(dlbridge::ErrorCodeName(ErrorCode::kStubLibrary)) == "kStubLibrary");
  CHECK(std::string(dlbridge::ErrorCodeName(ErrorCode::kNoDevice)) == "kNoDevice");
  CHECK(std::string(dlbridge::ErrorCodeName(ErrorCode::kRuntimeNotInitialized)) ==
        "kRuntimeNotInitialized");
  CHECK(std::string(dlbridge::ErrorCodeName(ErrorCode::kUnknownPointer)) == "kUnknownPointer");
  CHECK(std::string(dlbridge::GpuRuntimeName(GpuRuntime::kLevelZero)) == "Level Zero");
  CHECK_DLB_ERROR(dlbridge::QueryPointer(MemorySpace::kHost, nullptr),
                  ErrorCode::kInvalidMemorySpace, "has no runtime to ask");
  RuntimeReset reset;
  const std::pair<GpuRuntime, bool> built[] = {
      {GpuRuntime::kCuda, DLBRIDGE_TEST_WITH_CUDA != 0},
      {GpuRuntime::kHip, DLBRIDGE_TEST_WITH_HIP != 0},
      {GpuRuntime::kLevelZero, DLBRIDGE_TEST_WITH_LEVEL_ZERO != 0}};
  for (const auto& [runtime, on] : built) {
    if (on) continue;
    const dlbridge::RuntimeInfo info = dlbridge::GetRuntimeInfo(runtime);
    CHECK(info.status == RuntimeStatus::kNotBuilt);
    CHECK(Message(info).find("switched off") != std::string::npos);
  }
}
