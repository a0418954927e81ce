// The device table, both ways (spec/device-map.md DEV-*).
#include <doctest/doctest.h>

#include <map>

#include "counting.h"

using dlbridge::ErrorCode;
using dlbridge::MemorySpace;
using namespace dlbtest;

namespace {

// What the spec decides for every DLPack 1.3 device type, written independently of the table.
enum class Outcome { kHost, kCuda, kHip, kLevelZero, kMetal, kRejected };
const std::map<int32_t, std::pair<const char*, Outcome>> kExpected = {
    {1, {"kDLCPU", Outcome::kHost}},          {2, {"kDLCUDA", Outcome::kCuda}},
    {3, {"kDLCUDAHost", Outcome::kHost}},     {4, {"kDLOpenCL", Outcome::kRejected}},
    {7, {"kDLVulkan", Outcome::kRejected}},   {8, {"kDLMetal", Outcome::kMetal}},
    {9, {"kDLVPI", Outcome::kRejected}},      {10, {"kDLROCM", Outcome::kHip}},
    {11, {"kDLROCMHost", Outcome::kHost}},    {12, {"kDLExtDev", Outcome::kRejected}},
    {13, {"kDLCUDAManaged", Outcome::kCuda}}, {14, {"kDLOneAPI", Outcome::kLevelZero}},
    {15, {"kDLWebGPU", Outcome::kRejected}},  {16, {"kDLHexagon", Outcome::kRejected}},
    {17, {"kDLMAIA", Outcome::kRejected}},    {18, {"kDLTrn", Outcome::kRejected}},
};

}  // namespace

TEST_CASE("DEV-1 every DLPack device type imports as the spec decides") {
  Buffer buf;
  int context = 0;
  for (int32_t type = -1; type <= 20; ++type) {
    CAPTURE(type);
    Versioned h(buf.bytes, {2});
    h.T().device = {static_cast<DLDeviceType>(type), 0};
    auto it = kExpected.find(type);
    if (it == kExpected.end()) {
      CHECK(dlbridge::FindDeviceType(type) == nullptr);
      CHECK(std::string(dlbridge::DeviceTypeName(type)) == "unknown");
      CHECK_DLB_ERROR(dlbridge::FromDLPack(&h.managed), ErrorCode::kUnsupportedDevice,
                      "device_type " + std::to_string(type) + " is unknown to this build");
      CHECK(h.deletes == 1);
      continue;
    }
    CHECK(std::string(dlbridge::DeviceTypeName(type)) == it->second.first);
    const Outcome outcome = it->second.second;
    if (outcome == Outcome::kRejected) {
      CHECK_DLB_ERROR(dlbridge::FromDLPack(&h.managed), ErrorCode::kUnsupportedDevice,
                      std::string("(") + it->second.first + ") is not supported: ");
    } else if (outcome == Outcome::kMetal) {
      CHECK_DLB_ERROR(dlbridge::FromDLPack(&h.managed), ErrorCode::kMissingContext,
                      "MetalResolver");
    } else {
      dlbridge::ImportOptions opts;
      if (outcome == Outcome::kLevelZero) opts.level_zero_context = &context;
      dlbridge::Tensor t = dlbridge::FromDLPack(&h.managed, opts);
      const char* names[] = {"host", "cuda", "hip", "level_zero"};
      CHECK(std::string(t.descriptor.GetMemorySpace()) == names[static_cast<int>(outcome)]);
    }
    CHECK(h.deletes == 1);  // on failure at once, on success when `t` went out of scope
  }
}

TEST_CASE("DEV-2 every space name round-trips and exports as its default device type") {
  const std::pair<const char*, DLDeviceType> spaces[] = {
      {"host", kDLCPU}, {"cuda", kDLCUDA}, {"hip", kDLROCM}, {"level_zero", kDLOneAPI}};
  for (const auto& [name, type] : spaces) {
    const MemorySpace space = dlbridge::ParseMemorySpace(name);
    CHECK(std::string(dlbridge::MemorySpaceName(space)) == name);
    CHECK(dlbridge::DefaultDeviceType(space) == type);
    CHECK(dlbridge::DeviceTypeMatchesSpace(type, space));
  }
}

TEST_CASE("DEV-3 export, then import, gives back the space for every exportable device type") {
  Buffer buf;
  ReleaseCounter c;
  int ctx = 0, dev = 0;
  int count = 0;
  const dlbridge::DeviceTypeInfo* table = dlbridge::DeviceTable(&count);
  int exportable = 0;
  for (int i = 0; i < count; ++i) {
    const dlbridge::DeviceTypeInfo& row = table[i];
    CAPTURE(row.name);
    if (!row.exported) continue;
    ++exportable;
    dlbridge::Tensor t = HostTensor(buf, c, F32({2}));
    t.descriptor.SetMemorySpace(row.space);
    t.device = {static_cast<DLDeviceType>(row.device_type), 0};
    dlbridge::ExportOptions eo;
    eo.level_zero_context = &ctx;
    eo.level_zero_device = &dev;
    DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t), eo);
    CHECK(m->dl_tensor.device.device_type == row.device_type);
    dlbridge::ImportOptions io;
    io.level_zero_context = &ctx;
    dlbridge::Tensor back = dlbridge::FromDLPack(m, io);
    CHECK(back.descriptor.GetMemorySpaceKind() == row.space);
    CHECK(back.device.device_type == row.device_type);
  }
  CHECK(exportable == 7);  // CPU, CUDA, CUDAHost, ROCM, ROCMHost, CUDAManaged, OneAPI
  CHECK(c.calls == exportable);
}

TEST_CASE("DEV-4 a space never exports as a device type of another space") {
  const MemorySpace spaces[] = {MemorySpace::kHost, MemorySpace::kCuda, MemorySpace::kHip,
                                MemorySpace::kLevelZero};
  for (int32_t type = 0; type <= 20; ++type) {
    int matches = 0;
    for (MemorySpace s : spaces) matches += dlbridge::DeviceTypeMatchesSpace(type, s) ? 1 : 0;
    CAPTURE(type);
    CHECK(matches <= 1);
  }
  CHECK_FALSE(dlbridge::DeviceTypeMatchesSpace(kDLMetal, MemorySpace::kHost));
  CHECK_FALSE(dlbridge::DeviceTypeMatchesSpace(kDLCUDA, MemorySpace::kHost));
  CHECK(dlbridge::DeviceTypeMatchesSpace(kDLCUDAHost, MemorySpace::kHost));
  CHECK(dlbridge::DeviceTypeMatchesSpace(kDLCUDAManaged, MemorySpace::kCuda));
}

TEST_CASE("DEV-6 the copy facts are columns of the table") {
  using dlbridge::CopyAllocator;
  using dlbridge::GpuRuntime;
  struct Expect {
    int32_t type;
    CopyAllocator allocator;
    bool has_runtime;
    GpuRuntime runtime;
    int64_t default_stream;
  };
  const Expect rows[] = {
      {kDLCPU, CopyAllocator::kHost, false, GpuRuntime::kCuda, -1},
      {kDLCUDA, CopyAllocator::kRuntime, true, GpuRuntime::kCuda, 1},
      {kDLCUDAHost, CopyAllocator::kNone, true, GpuRuntime::kCuda, 1},
      {kDLCUDAManaged, CopyAllocator::kNone, true, GpuRuntime::kCuda, 1},
      {kDLROCM, CopyAllocator::kRuntime, true, GpuRuntime::kHip, 0},
      {kDLROCMHost, CopyAllocator::kNone, true, GpuRuntime::kHip, 0},
      {kDLOneAPI, CopyAllocator::kRuntime, true, GpuRuntime::kLevelZero, -1},
      {kDLMetal, CopyAllocator::kNone, false, GpuRuntime::kCuda, -1},
      {kDLOpenCL, CopyAllocator::kNone, false, GpuRuntime::kCuda, -1},
  };
  for (const Expect& e : rows) {
    const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(e.type);
    REQUIRE(row != nullptr);
    CAPTURE(row->name);
    CHECK(row->copy_allocator == e.allocator);
    CHECK(row->has_copy_runtime == e.has_runtime);
    if (e.has_runtime) CHECK(row->copy_runtime == e.runtime);
    CHECK(row->default_stream == e.default_stream);
  }
  // CopyTo's accepted targets are the rows with an allocator.
  CHECK(dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo& row) {
          return row.copy_allocator != CopyAllocator::kNone;
        }) == "kDLCPU, kDLCUDA, kDLROCM, kDLOneAPI");
}

TEST_CASE("DEV-6 messages list device types from the table") {
  // The names of the rows a predicate picks, in table order, comma-separated; none: empty.
  CHECK(dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo& row) {
          return row.host_addressable;
        }) == "kDLCPU, kDLCUDAHost, kDLROCMHost");
  CHECK(dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo& row) {
          return row.has_runtime && row.runtime == dlbridge::GpuRuntime::kCuda;
        }) == "kDLCUDA, kDLCUDAManaged");
  CHECK(dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo&) { return false; }).empty());
  int count = 0;
  const dlbridge::DeviceTypeInfo* rows = dlbridge::DeviceTable(&count);
  std::string all;
  for (int i = 0; i < count; ++i) all += std::string(all.empty() ? "" : ", ") + rows[i].name;
  CHECK(dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo&) { return true; }) == all);
  // Tensor::Data's refusal (HLP-4) names the host-addressable types the table has.
  int32_t values[4] = {};
  dlbridge::Tensor t;
  t.descriptor.Set(values, sizeof values);
  t.descriptor.SetMemorySpace("cuda");
  t.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<int32_t>(), {4});
  CHECK_DLB_ERROR(t.Data<int32_t>(), ErrorCode::kUnsupportedDevice,
                  "(space \"host\": kDLCPU, kDLCUDAHost, kDLROCMHost); copy it to the host first");
}

TEST_CASE("DEV-5 stream family and host access are the device table's columns") {
  using dlbridge::StreamFamily;
  // What the Python DLPack protocol says of each type, written independently of the table.
  const std::map<int32_t, std::pair<StreamFamily, bool>> expected = {
      {kDLCPU, {StreamFamily::kNone, true}},      {kDLCUDA, {StreamFamily::kCuda, false}},
      {kDLCUDAHost, {StreamFamily::kCuda, true}}, {kDLCUDAManaged, {StreamFamily::kCuda, true}},
      {kDLROCM, {StreamFamily::kRocm, false}},    {kDLROCMHost, {StreamFamily::kRocm, true}},
  };
  int count = 0;
  const dlbridge::DeviceTypeInfo* table = dlbridge::DeviceTable(&count);
  for (int i = 0; i < count; ++i) {
    CAPTURE(table[i].name);
    const auto it = expected.find(table[i].device_type);
    const StreamFamily family =
        it != expected.end() ? it->second.first : StreamFamily::kUnspecified;
    const bool host = it != expected.end() && it->second.second;
    CHECK(table[i].stream_family == family);
    CHECK(table[i].host_accessible == host);
  }
  for (int32_t type = -1; type <= 40; ++type) {  // the accessors, also for unknown values
    CAPTURE(type);
    const auto it = expected.find(type);
    CHECK(dlbridge::StreamFamilyOf(type) ==
          (it != expected.end() ? it->second.first : StreamFamily::kUnspecified));
    CHECK(dlbridge::IsHostAccessible(type) == (it != expected.end() && it->second.second));
  }
  CHECK(dlbridge::OrdersStreams(StreamFamily::kCuda));
  CHECK(dlbridge::OrdersStreams(StreamFamily::kRocm));
  CHECK_FALSE(dlbridge::OrdersStreams(StreamFamily::kNone));
  CHECK_FALSE(dlbridge::OrdersStreams(StreamFamily::kUnspecified));
}
