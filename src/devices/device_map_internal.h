// What the device tables (src/devices/device_map.cpp) answer beyond dlbridge/device_map.h: the
// runtime of a space, and "accepted values" text generated from the tables.
#pragma once

#include <cstdint>
#include <string>

#include "dlbridge/device_map.h"
#include "dlbridge/device_verification.h"

namespace dlbridge {
namespace detail {

/// How many device type values the table indexes (0..kDeviceTypeSlots-1; larger ones are not
/// DLPack types dlbridge knows).
constexpr int32_t kDeviceTypeSlots = 32;
/// The device table's row of each device type value, nullptr for values that are not a known
/// type: FindDeviceType's index, for the inline lookup below.
struct DeviceRowIndex {
  const DeviceTypeInfo* row[kDeviceTypeSlots];
};
/// The index, built from the table at compile time. In src/devices/device_map.cpp.
extern const DeviceRowIndex kDeviceRowIndex;
/// FindDeviceType, inline (one comparison and one load), for the converters' hot paths.
inline const DeviceTypeInfo* DeviceRow(int32_t device_type) noexcept {
  return static_cast<uint32_t>(device_type) < static_cast<uint32_t>(kDeviceTypeSlots)
             ? kDeviceRowIndex.row[device_type]
             : nullptr;
}
/// DeviceTypeMatchesSpace, inline (the public function calls this one): whether `device_type`
/// is a type export may label `space` with.
inline bool TypeMatchesSpace(int32_t device_type, MemorySpace space) noexcept {
  const DeviceTypeInfo* row = DeviceRow(device_type);
  return row != nullptr && row->exported && row->space == space;
}

/// Whether a GPU runtime owns `space` (the has_runtime column of its default device type),
/// and if so which (`*runtime`). False for "host" and for values that are not a space.
bool SpaceRuntime(MemorySpace space, GpuRuntime* runtime) noexcept;

/// The device types FromDLPack imports, from the device table: the types that map straight
/// to a space, then those that need a context, then those that need a resolver, e.g.
/// "kDLCPU, kDLCUDA, ..., kDLOneAPI (with a context), kDLMetal (with a resolver)".
std::string AcceptedImportDeviceTypes();

/// The names of the spaces a GPU runtime owns, quoted ("\"cuda\", \"hip\", \"level_zero\"").
std::string GpuSpaceNames();

}  // namespace detail
}  // namespace dlbridge
