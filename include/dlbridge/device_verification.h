/// @file
/// GPU pointer verification: which runtime answers for a device type (GpuRuntime) and when
/// export and import ask it (DeviceVerification). Two enums and nothing else, so that the
/// options of ToDLPackVersioned and FromDLPack do not pull in the runtime API
/// (dlbridge/runtime.h). See spec/device-map.md (GPU-*).
#pragma once

namespace dlbridge {

/// The runtimes dlbridge can ask about pointers.
enum class GpuRuntime : int {
  kCuda = 0,       ///< The CUDA driver, libcuda.so.1 (entry points through cuGetProcAddress).
  kHip = 1,        ///< The HIP runtime, `libamdhip64.so.<major>` (7, 6, then 5).
  kLevelZero = 2,  ///< The oneAPI Level Zero loader, libze_loader.so.1.
};

/// How import and export check a GPU pointer against what its runtime says.
enum class DeviceVerification : int {
  /// Check where the runtime is loaded and has a device; elsewhere accept the labels as given.
  kWhereAvailable = 0,
  /// Never ask the runtime when the device id is given (no pointer query at all).
  kOff = 1,
  /// Check, and fail when the runtime cannot answer (its status's error).
  kRequired = 2,
};

}  // namespace dlbridge
