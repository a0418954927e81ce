/// @file
/// GPU runtimes: what dlbridge asks CUDA, HIP and Level Zero about a pointer.
/// Each runtime is loaded with dlopen on first use (no link-time dependency); a machine with
/// none of them handles host memory as before. See spec/device-map.md (GPU-*).
#pragma once

#include <cstdint>
#include <string>

#include "dlbridge/export.h"
#include "dlbridge/memory_space.h"

namespace dlbridge {

/// The runtimes dlbridge can ask about pointers.
enum class GpuRuntime : int {
  kCuda = 0,       ///< The CUDA driver, libcuda.so.1 (entry points through cuGetProcAddress).
  kHip = 1,        ///< The HIP runtime, `libamdhip64.so.<major>` (7, 6, then 5).
  kLevelZero = 2,  ///< The oneAPI Level Zero loader, libze_loader.so.1.
};

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

/// What a runtime says about one pointer (QueryPointer, testing::FakeRuntime::Query).
struct PointerInfo {
  /// What the memory is.
  PointerKind kind = PointerKind::kUnknown;
  /// The device the memory belongs to: the CUDA / HIP ordinal, or for Level Zero the index
  /// of its root device (see spec/device-map.md GPU-7); -1 when the runtime names none.
  int32_t device_ordinal = -1;
  /// Level Zero only: the ze_device_handle_t zeMemGetAllocProperties reported (may be null).
  void* level_zero_device = nullptr;
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

/// Hooks for dlbridge's own tests; not for production use.
namespace testing {

/// Pointer queries dlbridge has run (real or fake runtimes), since the process started.
DLBRIDGE_API uint64_t PointerQueryCount() noexcept;

/// Forgets what was loaded for `runtime`; the next use loads `library` (a file name or path)
/// instead of the default names, or the defaults (and $DLBRIDGE_<RUNTIME>_LIBRARY) when null.
DLBRIDGE_API void SetRuntimeLibrary(GpuRuntime runtime, const char* library);

/// How the HIP backend reads hipPointerAttribute_t's memory type under a runtime of
/// `runtime_major` (ROCm 6 renumbered it).
DLBRIDGE_API PointerKind HipPointerKind(int runtime_major, int memory_type, bool is_managed);

/// A model of a runtime for tests: answers pointer queries without a GPU.
class DLBRIDGE_API FakeRuntime {
 public:
  /// Virtual: a fake may be destroyed through this base.
  virtual ~FakeRuntime();
  /// Answers a pointer query as the runtime would. `level_zero_context` is the Level Zero
  /// context the query runs with (the caller's, else the registered one; may be null).
  virtual PointerInfo Query(const void* pointer, void* level_zero_context) const = 0;
  /// Level Zero: the root-device index of a ze_device_handle_t; -1 = unknown (the default).
  virtual int32_t LevelZeroDeviceIndex(void* device) const;
};

/// Routes `runtime`'s queries to `fake` (reported as ready); nullptr restores the real one.
/// The fake must outlive its registration.
DLBRIDGE_API void SetFakeRuntime(GpuRuntime runtime, const FakeRuntime* fake) noexcept;

}  // namespace testing
}  // namespace dlbridge
