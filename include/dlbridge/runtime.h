/// @file
/// GPU runtimes: what dlbridge asks CUDA, HIP and Level Zero about a pointer, and the
/// stream ordering of an exchange (OrderStreams). Each runtime is loaded with dlopen on first use
/// (no link-time dependency); a machine with none of them handles host memory as before. See
/// spec/device-map.md (GPU-*) and spec/streams.md (STR-*). GpuRuntime and DeviceVerification are in
/// dlbridge/device_verification.h, what a runtime reports in dlbridge/runtime_info.h; dlbridge's
/// test hooks are in testing/include/dlbridge/testing.h, which is not installed.
#pragma once

#include <cstdint>
#include <string>

#include "dlbridge/device_verification.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/memory_space.h"
#include "dlbridge/runtime_info.h"

namespace dlbridge {

/// "CUDA", "HIP" or "Level Zero".
DLBRIDGE_API const char* GpuRuntimeName(GpuRuntime runtime) noexcept;

/// Loads the runtime if not yet tried (once per process, thread-safe) and reports its state.
DLBRIDGE_API RuntimeInfo GetRuntimeInfo(GpuRuntime runtime);

/// Asks the runtime of `space` ("cuda", "hip", "level_zero") what `pointer` is. Level Zero
/// needs the context (argument, else the process-wide one from SetLevelZeroContext).
/// Throws Error: kRuntimeUnavailable (not built / not installed / failed), kStubLibrary,
/// kNoDevice, kRuntimeNotInitialized, kMissingContext, kInvalidMemorySpace for "host".
DLBRIDGE_API PointerInfo QueryPointer(MemorySpace space, const void* pointer,
                                      void* level_zero_context = nullptr);

/// Registers the Level Zero context and device used when ImportOptions / ExportOptions name
/// none (once per process, typically at start-up); nullptr, nullptr clears them. The handles
/// must stay valid while registered.
DLBRIDGE_API void SetLevelZeroContext(void* context, void* device) noexcept;
/// Reads the registered Level Zero context and device (null when none is registered) into
/// `*context` and `*device`; a null output is skipped.
DLBRIDGE_API void GetLevelZeroContext(void** context, void** device) noexcept;

/// Checks one stream value for `device`, by the Python DLPack protocol's rule (a C++ caller
/// has no None: it passes no stream at all instead). CUDA (kDLCUDA, kDLCUDAHost,
/// kDLCUDAManaged): 1 (legacy default stream), 2 (per-thread default stream), > 2 (a
/// CUstream) and -1 (order nothing) are accepted; 0 and < -1 are not. ROCm (kDLROCM,
/// kDLROCMHost): 0 (the null stream), > 2 (a hipStream_t) and -1; 1, 2 and < -1 are not.
/// kDLCPU has no streams: every value is refused. Other device types: any value (DLPack
/// defines no convention for them). Throws Error(kInvalidArgument) whose message starts with
/// `argument` (e.g. "OrderStreams: consumer") and names the value, the device and the values
/// accepted. Owns nothing, loads nothing.
DLBRIDGE_API void CheckStreamValue(DLDevice device, int64_t stream, const char* argument);

/// Makes work queued later on stream `consumer` wait for the work queued so far on stream
/// `producer`, both streams of `device` given as Python DLPack stream values (CheckStreamValue).
/// CUDA (kDLCUDA, kDLCUDAHost, kDLCUDAManaged): with the primary context of
/// device.device_id current, an event with timing disabled is recorded on `producer`, and
/// `consumer` waits on it; ROCm (kDLROCM, kDLROCMHost): the same with HIP, device.device_id
/// selected and the caller's device restored. The event comes from a small per-device pool and
/// goes back to it once the wait is queued (the wait keeps its effect), so a steady stream of
/// exchanges creates no events; the pools are emptied at library unload (CUDA) and start empty
/// in a forked child. The calls return at once: nothing is waited for on the host.
/// Returns true when it ordered; false when nothing was needed, without loading any runtime:
/// `consumer` or `producer` -1, `producer` == `consumer`, or a device type without streams
/// (kDLCPU and every other non-CUDA, non-ROCm type; their values are not checked).
/// Throws Error: kInvalidArgument for a value CheckStreamValue refuses (naming "producer" or
/// "consumer"); kRuntimeUnavailable, kStubLibrary, kNoDevice or kRuntimeNotInitialized when
/// ordering is needed and the runtime cannot be used (not built, not installed, ...); and
/// kRuntimeUnavailable when a driver call fails, naming the call, the driver's error and the
/// device. On every failure the event it took and did not wait on is destroyed and the context /
/// device it changed is restored (unless that very call is the one that failed), so nothing leaks;
/// the ordering is then not to be relied on.
DLBRIDGE_API bool OrderStreams(DLDevice device, int64_t producer, int64_t consumer);

}  // namespace dlbridge
