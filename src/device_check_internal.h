// What export and import ask of the GPU runtimes, answered in src/device_map.cpp (the only
// caller of the runtime backends). spec/device-map.md GPU-*.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>

#include "dlbridge/memory_space.h"
#include "dlbridge/runtime.h"

namespace dlbridge {
namespace detail {

/// Export of a GPU space. `device` holds the type and id resolved so far (id -1 = not given);
/// `type_given` says whether Tensor::device named the type. Resolves a missing id from the
/// pointer (null / 0 bytes: nothing to ask), checks a given one unless `verify` is kOff, and may
/// relabel pinned host and managed memory (GPU-3, GPU-4). Throws Error.
void CheckExportDevice(const char* where, MemorySpace space, bool type_given, DLDevice* device,
                       const void* pointer, DeviceVerification verify, void* level_zero_context,
                       void* level_zero_device);

/// Import of a GPU device type (kDLCUDA, kDLCUDAManaged, kDLROCM, kDLOneAPI) whose lowest
/// reached byte is `pointer`: checks kind and ordinal unless `verify` is kOff (GPU-5). Throws.
void CheckImportDevice(const char* where, DLDevice device, const void* pointer,
                       DeviceVerification verify, void* level_zero_context);

/// The Level Zero handles to use: the options' when given, else the process-wide ones.
void LevelZeroHandles(void* option_context, void* option_device, void** context, void** device);

}  // namespace detail
}  // namespace dlbridge
