// The one table that maps memory spaces and DLPack device types, both ways.
#include "dlbridge/device_map.h"

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "device_check_internal.h"
#include "dlbridge/error.h"
#include "dlbridge/testing.h"
#include "error_internal.h"
#include "layout_internal.h"
#include "runtime.h"

namespace dlbridge {
namespace {

struct SpaceRow {
  MemorySpace space;
  const char* name;
  DLDeviceType default_type;
};

constexpr SpaceRow kSpaces[] = {
    {MemorySpace::kHost, "host", kDLCPU},
    {MemorySpace::kCuda, "cuda", kDLCUDA},
    {MemorySpace::kHip, "hip", kDLROCM},
    {MemorySpace::kLevelZero, "level_zero", kDLOneAPI},
};

constexpr MemorySpace H = MemorySpace::kHost;
constexpr DeviceImport kSpace = DeviceImport::kSpace;
constexpr DeviceImport kReject = DeviceImport::kRejected;

// Device types are written as numbers so that this table compiles against any 1.x header;
// values a header does not have are still listed and decided here.
constexpr DeviceTypeInfo kDevices[] = {
    {1, "kDLCPU", kSpace, H, true, true, "CPU memory is host memory"},
    {2, "kDLCUDA", kSpace, MemorySpace::kCuda, true, false, "CUDA device memory"},
    {3, "kDLCUDAHost", kSpace, H, true, true, "CUDA pinned host memory is host-addressable"},
    {4, "kDLOpenCL", kReject, H, false, false,
     "OpenCL data is a cl_mem handle, not an address; no memory space describes it"},
    {7, "kDLVulkan", kReject, H, false, false,
     "Vulkan data is a buffer handle, not an address; no memory space describes it"},
    {8, "kDLMetal", DeviceImport::kNeedsResolver, H, false, false,
     "Metal data is an id<MTLBuffer> handle; only a registered MetalResolver can turn "
     "shared storage into a host pointer"},
    {9, "kDLVPI", kReject, H, false, false, "Verilog simulator memory has no memory space"},
    {10, "kDLROCM", kSpace, MemorySpace::kHip, true, false, "ROCm device memory is HIP memory"},
    {11, "kDLROCMHost", kSpace, H, true, true, "ROCm pinned host memory is host-addressable"},
    {12, "kDLExtDev", kReject, H, false, false,
     "reserved extension device: its data has no agreed meaning"},
    {13, "kDLCUDAManaged", kSpace, MemorySpace::kCuda, true, true,
     "CUDA managed memory is addressed as CUDA memory; DLPack fixes its device_id at 0"},
    {14, "kDLOneAPI", DeviceImport::kNeedsContext, MemorySpace::kLevelZero, true, false,
     "oneAPI pointers are Level Zero USM pointers, meaningful only with their ze_context"},
    {15, "kDLWebGPU", kReject, H, false, false,
     "WebGPU data is a GPUBuffer handle; no memory space describes it"},
    {16, "kDLHexagon", kReject, H, false, false, "Qualcomm Hexagon DSP memory has no memory space"},
    {17, "kDLMAIA", kReject, H, false, false, "Microsoft MAIA memory has no memory space"},
    {18, "kDLTrn", kReject, H, false, false, "AWS Trainium memory has no memory space"},
};

}  // namespace

const char* MemorySpaceName(MemorySpace space) noexcept {
  for (const SpaceRow& row : kSpaces) {
    if (row.space == space) return row.name;
  }
  return "unknown";
}

MemorySpace ParseMemorySpace(const char* name) {
  if (name == nullptr) {
    throw Error(ErrorCode::kInvalidMemorySpace,
                "memory space is null; accepted: \"host\", \"cuda\", \"hip\", \"level_zero\"");
  }
  for (const SpaceRow& row : kSpaces) {
    if (std::strcmp(row.name, name) == 0) return row.space;
  }
  if (std::strcmp(name, "metal") == 0) {
    throw Error(ErrorCode::kInvalidMemorySpace,
                "memory space \"metal\" does not exist: describe shared-storage Metal memory "
                "as \"host\" (it is unified memory); private-storage Metal memory has no "
                "host-readable pointer and cannot be described");
  }
  throw Error(ErrorCode::kInvalidMemorySpace, std::string("memory space \"") + name +
                                                  "\" is unknown; accepted: \"host\", "
                                                  "\"cuda\", \"hip\", \"level_zero\"");
}

// Row index for each device type value (-1: not in the table), so lookups on every export
// and import are a direct index rather than a search of the table.
constexpr int32_t kMaxDeviceType = 31;
struct DeviceIndex {
  int8_t row[kMaxDeviceType + 1];
};
constexpr DeviceIndex MakeDeviceIndex() {
  DeviceIndex index{};
  for (int32_t v = 0; v <= kMaxDeviceType; ++v) index.row[v] = -1;
  for (size_t i = 0; i < sizeof(kDevices) / sizeof(kDevices[0]); ++i) {
    index.row[kDevices[i].device_type] = static_cast<int8_t>(i);
  }
  return index;
}
constexpr DeviceIndex kDeviceIndex = MakeDeviceIndex();

const DeviceTypeInfo* FindDeviceType(int32_t device_type) noexcept {
  if (device_type < 0 || device_type > kMaxDeviceType) return nullptr;
  const int8_t row = kDeviceIndex.row[device_type];
  return row < 0 ? nullptr : &kDevices[row];
}

const char* DeviceTypeName(int32_t device_type) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  return row ? row->name : "unknown";
}

DLDeviceType DefaultDeviceType(MemorySpace space) noexcept {
  for (const SpaceRow& row : kSpaces) {
    if (row.space == space) return row.default_type;
  }
  return kDLCPU;
}

bool DeviceTypeMatchesSpace(int32_t device_type, MemorySpace space) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  return row != nullptr && row->exported && row->space == space;
}

const DeviceTypeInfo* DeviceTable(int* count) noexcept {
  if (count) *count = static_cast<int>(sizeof(kDevices) / sizeof(kDevices[0]));
  return kDevices;
}

// ---- GPU runtimes (spec/device-map.md GPU-*): the only caller of the backends. ----

using detail::Fail;

namespace {

std::atomic<uint64_t> g_queries{0};
std::atomic<const testing::FakeRuntime*> g_fakes[3] = {};
std::atomic<void*> g_ze_context{nullptr};
std::atomic<void*> g_ze_device{nullptr};

int RuntimeIndex(GpuRuntime runtime) noexcept {
  const int i = static_cast<int>(runtime);
  return i >= 0 && i < 3 ? i : 0;
}

// One runtime as the checks see it: the real backend, or a test's fake.
struct Runtime {
  GpuRuntime which;
  const testing::FakeRuntime* fake;

  const RuntimeInfo& Info() const {
    static const RuntimeInfo kFakeInfo{RuntimeStatus::kReady, "fake runtime (tests)", 0, ""};
    return fake != nullptr ? kFakeInfo : Real().Info();
  }
  RuntimeStatus Query(const void* pointer, void* context, PointerInfo* info,
                      std::string* error) const {
    g_queries.fetch_add(1, std::memory_order_relaxed);
    if (fake != nullptr) {
      *info = fake->Query(pointer, context);
      return RuntimeStatus::kReady;
    }
    return Real().Query(pointer, context, info, error);
  }
  int32_t DeviceIndex(void* device, std::string* error) const {
    if (fake != nullptr) return fake->LevelZeroDeviceIndex(device);
    return Real().DeviceIndex(device, error);
  }
  detail::Backend& Real() const {
    switch (which) {
      case GpuRuntime::kHip: return detail::HipBackend();
      case GpuRuntime::kLevelZero: return detail::LevelZeroBackend();
      case GpuRuntime::kCuda: break;
    }
    return detail::CudaBackend();
  }
};

Runtime For(GpuRuntime which) {
  return Runtime{which, g_fakes[RuntimeIndex(which)].load(std::memory_order_acquire)};
}

GpuRuntime RuntimeOf(MemorySpace space) {
  return space == MemorySpace::kHip         ? GpuRuntime::kHip
         : space == MemorySpace::kLevelZero ? GpuRuntime::kLevelZero
                                            : GpuRuntime::kCuda;
}

ErrorCode CodeFor(RuntimeStatus status) {
  switch (status) {
    case RuntimeStatus::kStubLibrary: return ErrorCode::kStubLibrary;
    case RuntimeStatus::kNoDevice: return ErrorCode::kNoDevice;
    case RuntimeStatus::kNotInitialized: return ErrorCode::kRuntimeNotInitialized;
    default: return ErrorCode::kRuntimeUnavailable;
  }
}

std::string PointerText(const void* pointer) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "pointer %p", pointer);
  return buf;
}

// Why the runtime does not know a pointer, and what to do about it.
std::string UnknownText(GpuRuntime which, PointerKind kind, void* context, const char* skip) {
  if (which == GpuRuntime::kLevelZero) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%p", context);
    return std::string(" is not an allocation of Level Zero context ") + buf +
           " (zeMemGetAllocProperties: ZE_MEMORY_TYPE_UNKNOWN); pass the context it was "
           "allocated from";
  }
  return std::string(" is not memory the ") + GpuRuntimeName(which) + " runtime knows (" +
         (kind == PointerKind::kUnregisteredHost ? "unregistered host memory"
                                                 : "pageable host memory, freed memory, or "
                                                   "another runtime's") +
         "); describe host memory as \"host\", or " + skip;
}

}  // namespace

namespace detail {

void LevelZeroHandles(void* option_context, void* option_device, void** context, void** device) {
  *context =
      option_context != nullptr ? option_context : g_ze_context.load(std::memory_order_acquire);
  *device = option_device != nullptr ? option_device : g_ze_device.load(std::memory_order_acquire);
}

void CheckExportDevice(const char* where, MemorySpace space, bool type_given, DLDevice* device,
                       const void* pointer, DeviceVerification verify, void* level_zero_context,
                       void* level_zero_device) {
  if (space == MemorySpace::kHost) return;
  const DeviceTypeInfo* row = FindDeviceType(device->device_type);
  const bool need_id = !row->id_is_zero && device->device_id < 0;
  if (!need_id && verify == DeviceVerification::kOff) return;  // GPU-8: no query at all
  const GpuRuntime which = RuntimeOf(space);
  const std::string name = GpuRuntimeName(which);
  auto missing = [&](const std::string& why) {
    Fail(ErrorCode::kMissingDeviceId, std::string(where) + ": memory space \"" +
                                          MemorySpaceName(space) +
                                          "\" needs a device ordinal; set Tensor::device (e.g. {" +
                                          row->name + ", 0}) or ExportOptions::device_id; " + why);
  };
  if (pointer == nullptr) {
    if (need_id)
      missing("an empty descriptor has no pointer to ask the " + name + " runtime about");
    return;
  }
  const Runtime rt = For(which);
  const RuntimeInfo& info = rt.Info();
  if (info.status != RuntimeStatus::kReady) {
    if (need_id) missing("it could not be read from the pointer: " + info.message);
    if (verify == DeviceVerification::kRequired) {
      Fail(CodeFor(info.status),
           std::string(where) + ": ExportOptions::verify_device is kRequired but " + info.message);
    }
    return;
  }
  PointerInfo p;
  std::string error;
  const RuntimeStatus status = rt.Query(pointer, level_zero_context, &p, &error);
  if (status != RuntimeStatus::kReady) Fail(CodeFor(status), std::string(where) + ": " + error);
  const std::string at = " " + PointerText(pointer);
  switch (p.kind) {
    case PointerKind::kUnknown:
    case PointerKind::kUnregisteredHost:
      Fail(ErrorCode::kUnknownPointer,
           std::string(where) + ": memory space \"" + MemorySpaceName(space) + "\" but" + at +
               UnknownText(which, p.kind, level_zero_context,
                           "give the device id and set ExportOptions::verify_device to kOff to "
                           "export it unchecked"));
    case PointerKind::kPinnedHost: {
      if (space == MemorySpace::kLevelZero) break;  // host USM stays kDLOneAPI (GPU-7)
      const char* host = space == MemorySpace::kCuda ? "kDLCUDAHost" : "kDLROCMHost";
      if (type_given) {
        Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": Tensor::device says " + row->name +
                                             " but the " + name + " runtime reports that" + at +
                                             " is pinned host memory; describe it as \"host\" "
                                             "(with Tensor::device {" +
                                             host +
                                             ", 0} if wanted), or leave Tensor::device "
                                             "unset to export it as " +
                                             host);
      }
      *device = DLDevice{space == MemorySpace::kCuda ? kDLCUDAHost : kDLROCMHost, 0};  // GPU-4
      return;
    }
    case PointerKind::kManaged:
      if (space == MemorySpace::kCuda) {
        // GPU-3: unlabelled managed memory is kDLCUDAManaged; a given ordinal is accepted,
        // since managed memory is addressable from every device.
        if (need_id && !type_given) *device = DLDevice{kDLCUDAManaged, 0};
        return;
      }
      if (space == MemorySpace::kHip && !need_id) return;
      break;
    case PointerKind::kDevice:
      if (device->device_type == kDLCUDAManaged) {
        Fail(ErrorCode::kDeviceMismatch,
             std::string(where) +
                 ": Tensor::device says kDLCUDAManaged but the CUDA runtime "
                 "reports that" +
                 at +
                 " is device memory, not managed memory; "
                 "use {kDLCUDA, ordinal} or leave Tensor::device unset");
      }
      break;
  }
  int32_t ordinal = p.device_ordinal;
  if (ordinal < 0 && space == MemorySpace::kLevelZero && level_zero_device != nullptr) {
    ordinal = rt.DeviceIndex(level_zero_device, &error);  // host USM: the caller's device
  }
  if (ordinal < 0) {
    if (need_id)
      missing("the " + name + " runtime names no device for" + at +
              (error.empty() ? std::string() : ": " + error));
    return;
  }
  if (need_id) {
    device->device_id = ordinal;
  } else if (device->device_id != ordinal) {
    Fail(ErrorCode::kDeviceMismatch,
         std::string(where) + ": device_id " + std::to_string(device->device_id) +
             " contradicts the " + name + " runtime:" + at + " belongs to device " +
             std::to_string(ordinal) + "; give " + std::to_string(ordinal) +
             " or leave the id unset to take it from the pointer");
  }
}

void CheckImportDevice(const char* where, DLDevice device, const void* pointer,
                       DeviceVerification verify, void* level_zero_context) {
  if (verify == DeviceVerification::kOff || pointer == nullptr) return;
  GpuRuntime which = GpuRuntime::kCuda;
  switch (static_cast<int32_t>(device.device_type)) {
    case kDLCUDA:
    case kDLCUDAManaged: which = GpuRuntime::kCuda; break;
    case kDLROCM: which = GpuRuntime::kHip; break;
    case kDLOneAPI: which = GpuRuntime::kLevelZero; break;
    default: return;  // host-like types need no runtime
  }
  const std::string name = GpuRuntimeName(which);
  const char* type = DeviceTypeName(device.device_type);
  const Runtime rt = For(which);
  const RuntimeInfo& info = rt.Info();
  if (info.status != RuntimeStatus::kReady) {
    if (verify == DeviceVerification::kRequired) {
      Fail(CodeFor(info.status),
           std::string(where) + ": ImportOptions::verify_device is kRequired but " + info.message);
    }
    return;
  }
  PointerInfo p;
  std::string error;
  const RuntimeStatus status = rt.Query(pointer, level_zero_context, &p, &error);
  if (status != RuntimeStatus::kReady) Fail(CodeFor(status), std::string(where) + ": " + error);
  const std::string at = " " + PointerText(pointer);
  switch (p.kind) {
    case PointerKind::kUnknown:
    case PointerKind::kUnregisteredHost:
      Fail(ErrorCode::kUnknownPointer,
           std::string(where) + ": the producer says " + type + " but" + at +
               UnknownText(which, p.kind, level_zero_context,
                           "set ImportOptions::verify_device to kOff to accept it unchecked"));
    case PointerKind::kPinnedHost:
      if (which == GpuRuntime::kLevelZero) break;
      Fail(ErrorCode::kDeviceMismatch,
           std::string(where) + ": the producer says " + type + " but the " + name +
               " runtime reports that" + at + " is pinned host memory; the producer should say " +
               (which == GpuRuntime::kCuda ? "kDLCUDAHost" : "kDLROCMHost") +
               " (set ImportOptions::verify_device to kOff to accept it as is)");
    case PointerKind::kManaged:
      if (which != GpuRuntime::kLevelZero) return;  // addressable from every device
      break;
    case PointerKind::kDevice:
      if (device.device_type == kDLCUDAManaged) {
        Fail(ErrorCode::kDeviceMismatch,
             std::string(where) +
                 ": the producer says kDLCUDAManaged but the CUDA runtime "
                 "reports that" +
                 at + " is device memory, not managed memory");
      }
      break;
  }
  if (p.device_ordinal >= 0 && p.device_ordinal != device.device_id) {
    Fail(ErrorCode::kDeviceMismatch,
         std::string(where) + ": device_id " + std::to_string(device.device_id) + " (" + type +
             ") contradicts the " + name + " runtime:" + at + " belongs to device " +
             std::to_string(p.device_ordinal) +
             " (set ImportOptions::verify_device to kOff to accept it as is)");
  }
}

}  // namespace detail

const char* GpuRuntimeName(GpuRuntime runtime) noexcept {
  switch (runtime) {
    case GpuRuntime::kCuda: return "CUDA";
    case GpuRuntime::kHip: return "HIP";
    case GpuRuntime::kLevelZero: return "Level Zero";
  }
  return "unknown";
}

RuntimeInfo GetRuntimeInfo(GpuRuntime runtime) { return For(runtime).Info(); }

PointerInfo QueryPointer(MemorySpace space, const void* pointer, void* level_zero_context) {
  if (space == MemorySpace::kHost) {
    Fail(ErrorCode::kInvalidMemorySpace,
         "QueryPointer: memory space \"host\" has no runtime to ask; accepted: \"cuda\", "
         "\"hip\", \"level_zero\"");
  }
  void* context = nullptr;
  void* device = nullptr;
  detail::LevelZeroHandles(level_zero_context, nullptr, &context, &device);
  if (space == MemorySpace::kLevelZero && context == nullptr) {
    Fail(ErrorCode::kMissingContext,
         "QueryPointer: Level Zero needs a context (the argument or SetLevelZeroContext)");
  }
  const Runtime rt = For(RuntimeOf(space));
  const RuntimeInfo& info = rt.Info();
  if (info.status != RuntimeStatus::kReady) {
    Fail(CodeFor(info.status), "QueryPointer: " + info.message);
  }
  PointerInfo p;
  std::string error;
  const RuntimeStatus status = rt.Query(pointer, context, &p, &error);
  if (status != RuntimeStatus::kReady) Fail(CodeFor(status), "QueryPointer: " + error);
  return p;
}

void SetLevelZeroContext(void* context, void* device) noexcept {
  g_ze_context.store(context, std::memory_order_release);
  g_ze_device.store(device, std::memory_order_release);
}

void GetLevelZeroContext(void** context, void** device) noexcept {
  if (context != nullptr) *context = g_ze_context.load(std::memory_order_acquire);
  if (device != nullptr) *device = g_ze_device.load(std::memory_order_acquire);
}

namespace testing {

uint64_t PointerQueryCount() noexcept { return g_queries.load(std::memory_order_relaxed); }

void SetRuntimeLibrary(GpuRuntime runtime, const char* library) {
  switch (runtime) {
    case GpuRuntime::kCuda: detail::ResetCudaBackend(library); break;
    case GpuRuntime::kHip: detail::ResetHipBackend(library); break;
    case GpuRuntime::kLevelZero: detail::ResetLevelZeroBackend(library); break;
  }
}

PointerKind HipPointerKind(int runtime_major, int memory_type, bool is_managed) {
  return detail::HipPointerKind(runtime_major, memory_type, is_managed);
}

FakeRuntime::~FakeRuntime() = default;

int32_t FakeRuntime::LevelZeroDeviceIndex(void*) const { return -1; }

void SetFakeRuntime(GpuRuntime runtime, const FakeRuntime* fake) noexcept {
  g_fakes[RuntimeIndex(runtime)].store(fake, std::memory_order_release);
}

}  // namespace testing
}  // namespace dlbridge
