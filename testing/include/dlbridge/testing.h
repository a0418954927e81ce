// dlbridge's test hooks (namespace dlbridge::testing): for dlbridge's own tests, not for
// production use. Not installed: a build reaches it through the CMake target dlbridge::testing
// (dlbridge_testing), a library of libdlbridge's objects plus src/testing/testing_hooks.cpp, which
// the tests link instead of dlbridge::dlbridge; libdlbridge itself never has these functions (see
// PKG-7). DLBRIDGE_TESTING_HOOKS (default: the tests are built) builds that library.
#pragma once

#include <cstdint>
#include <vector>

#include "dlbridge/checker.h"
#include "dlbridge/device_map.h"
#include "dlbridge/device_verification.h"
#include "dlbridge/export.h"
#include "dlbridge/runtime.h"

namespace dlbridge {
/// Hooks for dlbridge's own tests; not for production use.
namespace testing {

/// Pointer queries dlbridge has run (real or fake runtimes), since the process started.
DLBRIDGE_API uint64_t PointerQueryCount() noexcept;

/// Forgets what was loaded for `runtime`; the next use loads `library` (a file name or path)
/// instead of the default names, or the defaults (and $DLBRIDGE_<RUNTIME>_LIBRARY) when null.
DLBRIDGE_API void SetRuntimeLibrary(GpuRuntime runtime, const char* library);

/// Destroys the events OrderStreams keeps pooled for reuse (spec/streams.md, see STR-10) through
/// the CUDA and HIP runtimes that made them, so that a test can count live events or reset
/// a fake runtime without leaving the pool with handles the fake forgot.
DLBRIDGE_API void DrainEventPools();

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

/// Turns the fast paths of FromDLPack, ToDLPack* and ExportPlan off (false) or back on (true,
/// the default), so that a test can check that both ways give the same result or the same
/// error (spec/validation.md RT-5). Defined in src/dlpack/dlpack_rules.cpp; not for concurrent use.
DLBRIDGE_API void SetFastPaths(bool on) noexcept;

/// Whether this build keeps a spare export block (see LT-8): not in ledger or ASan builds.
DLBRIDGE_API bool SpareExportBlock() noexcept;

/// CheckDLPack's tensor checks of `managed` (not its version, flags or deleter) with `row` in
/// place of the device table's row for its device type, in the checks that read the row's facts
/// (alignment, byte_offset and address range: only for `address_arithmetic` rows), so that a
/// test can pose a row whose columns differ as no real row's do. Consumes nothing.
DLBRIDGE_API std::vector<Finding> CheckWithDeviceRow(const DLManagedTensorVersioned& managed,
                                                     const DeviceTypeInfo& row);

}  // namespace testing
}  // namespace dlbridge
