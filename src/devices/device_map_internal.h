// What the device tables (src/devices/device_map.cpp) answer beyond dlbridge/device_map.h: the
// runtime of a space, and "accepted values" text generated from the tables.
#pragma once

#include <string>

#include "dlbridge/device_map.h"
#include "dlbridge/device_verification.h"

namespace dlbridge {
namespace detail {

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
