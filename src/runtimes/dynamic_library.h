// Loading a shared library at run time and finding its functions: the one place that knows
// how the platform does it (POSIX dlopen, Windows LoadLibraryExW), and which file names the
// GPU runtimes have there. Used by the runtime backends (src/runtimes/runtime_backend.cpp,
// OpenFirst).
#pragma once

#include <string>
#include <vector>

namespace dlbridge {
namespace detail {

/// Opens the shared library `name` and returns its handle, never closed; or null with `error`
/// naming the library and saying why it did not load (dlerror; Windows: the system's message
/// and error number). Where a bare name is looked for: see PKG-10.
void* OpenLibrary(const std::string& name, std::string* error);

/// The address of the function `name` in a library OpenLibrary opened, or null.
void* LibrarySymbol(void* handle, const char* name);

// The GPU runtimes' library names on this platform (the backends' defaults).
#ifdef _WIN32
// What the drivers install into System32: NVIDIA's driver API, AMD's HIP runtime (ROCm 7 and 6
// on Windows carry the major version in the name, 5 did not), Intel's Level Zero loader.
inline constexpr const char* kCudaDriverLibrary = "nvcuda.dll";
inline constexpr const char* kHipRuntimePattern = "amdhip64{_7,_6,}.dll";
inline constexpr const char* kLevelZeroLoaderLibrary = "ze_loader.dll";
#else
inline constexpr const char* kCudaDriverLibrary = "libcuda.so.1";
inline constexpr const char* kHipRuntimePattern = "libamdhip64.so.{7,6,5}";
inline constexpr const char* kLevelZeroLoaderLibrary = "libze_loader.so.1";
#endif
/// The HIP runtime's names, newest major first (kHipRuntimePattern in messages).
std::vector<std::string> HipRuntimeNames();

}  // namespace detail
}  // namespace dlbridge
