// What the device checks (src/devices/device_check.cpp) ask of the GPU runtimes, answered by
// src/runtimes/runtime.cpp: the real backend, or the test fake registered for that runtime.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "dlbridge/device_verification.h"
#include "dlbridge/error.h"
#include "dlbridge/runtime.h"

namespace dlbridge {
namespace detail {

class Backend;  // src/runtimes/runtime_backend_internal.h

/// Pointer queries run since the process started (read by testing::PointerQueryCount).
extern std::atomic<uint64_t> g_queries;
/// What answers pointer queries in place of a runtime in the tests: the library's own interface,
/// so that libdlbridge needs nothing of the test hooks (not even a type's typeinfo, which
/// UBSan's vptr check asks for); src/testing/testing_hooks.cpp adapts testing::FakeRuntime to it
/// (see PKG-7).
class RuntimeFake {
 public:
  virtual ~RuntimeFake();
  virtual PointerInfo Query(const void* pointer, void* level_zero_context) const = 0;
  virtual int32_t LevelZeroDeviceIndex(void* device) const = 0;
};

/// Per runtime (RuntimeIndex), the fake its queries go to; null for the real backend. Only the
/// test hooks (src/testing/testing_hooks.cpp, see PKG-7) set one.
extern std::atomic<const RuntimeFake*> g_fakes[];

/// The Error code for a runtime that cannot answer (or whose query failed) with `status`.
ErrorCode CodeFor(RuntimeStatus status) noexcept;

/// The one answer to "is this runtime loaded and usable", for pointer queries (AskRuntime),
/// stream ordering and copies: loads `runtime` on first use and returns its state when it
/// cannot be used (status not kReady), null when it can. A test fake, which answers pointer
/// queries only, counts as usable there (AskRuntime), never here.
const RuntimeInfo* UnusableRuntime(GpuRuntime runtime);

/// The backend of `runtime` once it can be used (UnusableRuntime); otherwise throws
/// Error(CodeFor(status), where + the runtime's message). For the callers that need the
/// runtime's calls (stream ordering, copies); `where` names the caller, e.g. "CopyTo: ".
Backend& ReadyBackend(GpuRuntime runtime, const std::string& where);

/// What AskRuntime found out.
struct RuntimeAnswer {
  /// The runtime's state when it cannot answer (status not kReady), for the caller to decide
  /// what that means; null when it answered.
  const RuntimeInfo* unavailable = nullptr;
  /// What the runtime says the pointer is (only when it answered).
  PointerInfo pointer;
};

/// The ask-the-runtime sequence of every pointer check: loads `runtime` on first use (or
/// takes its test fake), and, when it is ready, asks it what `pointer` is (counted by
/// testing::PointerQueryCount). Throws Error(CodeFor(status), "<where>: <why>") when the query
/// itself fails.
RuntimeAnswer AskRuntime(const char* where, GpuRuntime runtime, const void* pointer,
                         void* level_zero_context);

/// Level Zero: the root-device index of a ze_device_handle_t (see GPU-10), from the runtime or
/// its test fake; -1, with `*error` saying why where the runtime says, when unknown.
int32_t LevelZeroDeviceIndex(void* device, std::string* error);

/// The Level Zero handles to use: the options' when given, else the process-wide ones
/// (SetLevelZeroContext).
void LevelZeroHandles(void* option_context, void* option_device, void** context, void** device);

}  // namespace detail
}  // namespace dlbridge
