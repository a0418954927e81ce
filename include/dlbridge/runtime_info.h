/// @file
/// What a GPU runtime reports: its state (RuntimeInfo) and what it says about a pointer
/// (PointerInfo). Value types only, below the runtime API (dlbridge/runtime.h) and the
/// backends that fill them, which so see nothing of DLPack.
#pragma once

#include <cstdint>
#include <string>

namespace dlbridge {

/// Whether a runtime can answer pointer queries, and if not, why.
enum class RuntimeStatus : int {
  kReady = 0,           ///< Loaded and initialised, with at least one device.
  kNotBuilt = 1,        ///< This build of dlbridge has the backend switched off.
  kNotInstalled = 2,    ///< The library could not be loaded (no driver installed).
  kStubLibrary = 3,     ///< The CUDA toolkit's link stub was loaded (CUDA_ERROR_STUB_LIBRARY).
  kNoDevice = 4,        ///< The runtime loaded but reports no device (or no driver).
  kNotInitialized = 5,  ///< The runtime loaded but could not be initialised.
  kFailed = 6,          ///< Any other failure (a library that is not the runtime, ...).
};

/// What GetRuntimeInfo reports.
struct RuntimeInfo {
  /// kReady, or why the runtime cannot answer pointer queries.
  RuntimeStatus status = RuntimeStatus::kNotBuilt;
  std::string library;  ///< The library loaded or tried (a file name or path).
  int version = 0;      ///< Driver / runtime version as the runtime reports it; 0 unknown.
  std::string message;  ///< What happened and what the caller can do; empty when ready.
};

/// What a runtime says a pointer is.
enum class PointerKind : int {
  kUnknown = 0,           ///< Not known to the runtime (CUDA type 0, HIP error, ZE UNKNOWN).
  kUnregisteredHost = 1,  ///< Host memory the runtime knows it does not manage (HIP >= 6).
  kPinnedHost = 2,        ///< Pinned / registered host memory (Level Zero: host USM).
  kDevice = 3,            ///< Device memory (pool and VMM allocations included).
  kManaged = 4,           ///< Managed / unified memory (Level Zero: shared USM).
};

/// What a runtime says about one pointer (QueryPointer).
struct PointerInfo {
  /// What the memory is.
  PointerKind kind = PointerKind::kUnknown;
  /// The device the memory belongs to: the CUDA / HIP ordinal, or for Level Zero the index
  /// of its root device (spec/device-map.md, see GPU-10); -1 when the runtime names none.
  int32_t device_ordinal = -1;
  /// Level Zero only: the ze_device_handle_t zeMemGetAllocProperties reported (may be null).
  void* level_zero_device = nullptr;
};

}  // namespace dlbridge
