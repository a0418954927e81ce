// What the runtime backends share (src/runtimes/runtime_backend_internal.h): the registry of the
// three backends, and choosing and opening their library.
#ifndef _WIN32
#include <pthread.h>
#endif

#include <atomic>
#include <cstdlib>

#include "runtimes/dynamic_library.h"
#include "runtimes/runtime_backend_internal.h"

namespace dlbridge {
namespace detail {

std::string LibraryOverride(bool has_override, const std::string& override_path,
                            const char* env_name) {
  if (has_override) return override_path;
  const char* env = std::getenv(env_name);
  return env != nullptr ? std::string(env) : std::string();
}

// GPU-1: the first name that loads (the defaults, a test's path or $DLBRIDGE_<X>_LIBRARY);
// every load error is kept, so that the backend's kNotInstalled names the missing library.
void* OpenFirst(const std::vector<std::string>& names, std::string* loaded, std::string* errors) {
  for (const std::string& name : names) {
    std::string why;
    void* handle = OpenLibrary(name, &why);
    if (handle != nullptr) {
      *loaded = name;
      return handle;
    }
    if (!errors->empty()) errors->append("; ");
    errors->append(why);
  }
  return nullptr;
}

void* Symbol(void* handle, const char* name) { return LibrarySymbol(handle, name); }

namespace {
std::atomic<uint64_t> g_fork_generation{0};
#ifndef _WIN32
// The only POSIX-only call of the event pools (see STR-10): a forked child counts a new
// generation, so that it never reuses the parent's events (Windows has no fork).
void CountFork() { g_fork_generation.fetch_add(1, std::memory_order_relaxed); }
const int g_atfork = pthread_atfork(nullptr, nullptr, &CountFork);
#endif
}  // namespace

uint64_t ForkGeneration() noexcept {
#ifndef _WIN32
  (void)g_atfork;
#endif
  return g_fork_generation.load(std::memory_order_relaxed);
}

Backend& BackendOf(GpuRuntime runtime) {
  static_assert(static_cast<int>(GpuRuntime::kCuda) == 0 &&
                    static_cast<int>(GpuRuntime::kHip) == 1 &&
                    static_cast<int>(GpuRuntime::kLevelZero) == kGpuRuntimeCount - 1,
                "kBackends is indexed by GpuRuntime");
  static Backend* const kBackends[kGpuRuntimeCount] = {MakeCudaBackend(), MakeHipBackend(),
                                                       MakeLevelZeroBackend()};
  return *kBackends[RuntimeIndex(runtime)];
}

}  // namespace detail
}  // namespace dlbridge
