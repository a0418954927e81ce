// The one table that maps memory spaces and DLPack device types, both ways.
#include "dlbridge/device_map.h"

#include <cstring>
#include <string>

#include "dlbridge/error.h"

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
    {3, "kDLCUDAHost", kSpace, H, true, true,
     "CUDA pinned host memory is host-addressable"},
    {4, "kDLOpenCL", kReject, H, false, false,
     "OpenCL data is a cl_mem handle, not an address; no memory space describes it"},
    {7, "kDLVulkan", kReject, H, false, false,
     "Vulkan data is a buffer handle, not an address; no memory space describes it"},
    {8, "kDLMetal", DeviceImport::kNeedsResolver, H, false, false,
     "Metal data is an id<MTLBuffer> handle; only a registered MetalResolver can turn "
     "shared storage into a host pointer"},
    {9, "kDLVPI", kReject, H, false, false,
     "Verilog simulator memory has no memory space"},
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

const DeviceTypeInfo* FindDeviceType(int32_t device_type) noexcept {
  for (const DeviceTypeInfo& row : kDevices) {
    if (row.device_type == device_type) return &row;
  }
  return nullptr;
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

}  // namespace dlbridge
