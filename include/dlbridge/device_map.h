/// @file
/// How memory spaces map to DLPack device types, both ways. Every answer comes from one
/// table in src/device_map.cpp; spec/device-map.md gives the reason for each row.
#pragma once

#include "dlbridge/dlpack_header.h"

#include <cstdint>

#include "dlbridge/export.h"
#include "dlbridge/memory_space.h"

namespace dlbridge {

/// What importing a DLPack device type leads to.
enum class DeviceImport : int {
  kSpace = 0,          ///< Maps straight to DeviceTypeInfo::space.
  kNeedsContext = 1,   ///< kDLOneAPI: level_zero, only with a Level Zero context.
  kNeedsResolver = 2,  ///< kDLMetal: data is an id<MTLBuffer>; resolved to host memory.
  kRejected = 3,       ///< No memory space can describe it.
};

/// One row of the device table.
struct DeviceTypeInfo {
  int32_t device_type;  ///< The DLDeviceType value.
  const char* name;     ///< Its enumerator name, e.g. "kDLCUDAHost".
  DeviceImport import;  ///< What FromDLPack does with it.
  MemorySpace space;    ///< The space it imports as (kSpace, kNeedsContext, kNeedsResolver).
  bool exported;        ///< Whether a descriptor of `space` may export with this type.
  bool id_is_zero;      ///< CPU-like types whose device_id is always 0.
  const char* reason;   ///< Why the row is what it is (used in error messages).
};

/// The row for a device type, or nullptr when this build does not know the value.
DLBRIDGE_API const DeviceTypeInfo* FindDeviceType(int32_t device_type) noexcept;

/// The enumerator name of a device type, or "unknown" for values this build does not know.
DLBRIDGE_API const char* DeviceTypeName(int32_t device_type) noexcept;

/// The device type a space exports as when the caller names none (kDLCPU, kDLCUDA,
/// kDLROCM, kDLOneAPI).
DLBRIDGE_API DLDeviceType DefaultDeviceType(MemorySpace space) noexcept;

/// Whether a tensor of `space` may be exported with `device_type` (e.g. host with
/// kDLCUDAHost, cuda with kDLCUDAManaged).
DLBRIDGE_API bool DeviceTypeMatchesSpace(int32_t device_type, MemorySpace space) noexcept;

/// Every row, in DLDeviceType order, for tests and documentation.
DLBRIDGE_API const DeviceTypeInfo* DeviceTable(int* count) noexcept;

}  // namespace dlbridge
