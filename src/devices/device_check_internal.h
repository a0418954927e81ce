// Device verification: what export and import ask of the GPU runtimes about a pointer,
// answered in src/devices/device_check.cpp. spec/device-map.md GPU-*.
#pragma once

#include "dlbridge/device_verification.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/memory_space.h"

namespace dlbridge {
namespace detail {

/// Export of a GPU space. `device` holds the type and id resolved so far (id -1 = not given);
/// `type_given` says whether Tensor::device named the type. Resolves a missing id from the
/// pointer (null / 0 bytes: nothing to ask), checks a given one unless `verify` is kOff, and may
/// relabel pinned host and managed memory (see GPU-3, see GPU-4). Throws Error.
void CheckExportDevice(const char* where, MemorySpace space, bool type_given, DLDevice* device,
                       const void* pointer, DeviceVerification verify, void* level_zero_context,
                       void* level_zero_device);

/// Import of a device type a GPU runtime owns (DeviceTypeInfo::has_runtime: kDLCUDA,
/// kDLCUDAManaged, kDLROCM, kDLOneAPI; others return at once) whose lowest reached byte is
/// `pointer`: checks kind and ordinal unless `verify` is kOff (see GPU-5). Throws Error.
void CheckImportDevice(const char* where, DLDevice device, const void* pointer,
                       DeviceVerification verify, void* level_zero_context);

}  // namespace detail
}  // namespace dlbridge
