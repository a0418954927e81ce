// src/runtimes/dynamic_library.h: run-time library loading, POSIX and Windows halves.
#include "runtimes/dynamic_library.h"

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cstring>
#else
#include <dlfcn.h>
#endif

namespace dlbridge {
namespace detail {

#ifdef _WIN32

namespace {

std::wstring Widen(const std::string& utf8) {
  if (utf8.empty()) return std::wstring();
  const int n =
      MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring wide(static_cast<size_t>(n > 0 ? n : 0), L'\0');
  if (n > 0) {
    MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), &wide[0], n);
  }
  return wide;
}

std::string Narrow(const wchar_t* wide, int length) {
  const int n = WideCharToMultiByte(CP_UTF8, 0, wide, length, nullptr, 0, nullptr, nullptr);
  std::string utf8(static_cast<size_t>(n > 0 ? n : 0), '\0');
  if (n > 0) WideCharToMultiByte(CP_UTF8, 0, wide, length, &utf8[0], n, nullptr, nullptr);
  return utf8;
}

// The system's text for `code` (FormatMessage), without its trailing line break and period
// space, then the number, which is what a search for the failure needs.
std::string SystemMessage(DWORD code) {
  wchar_t* text = nullptr;
  const DWORD length = FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
      nullptr, code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string message = length > 0 ? Narrow(text, static_cast<int>(length)) : std::string();
  if (text != nullptr) LocalFree(text);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' ||
                              message.back() == ' ' || message.back() == '.')) {
    message.pop_back();
  }
  if (message.empty()) message = "cannot be loaded";
  return message + " (Windows error " + std::to_string(code) + ")";
}

bool IsBareName(const std::string& name) { return name.find_first_of("/\\:") == std::string::npos; }

}  // namespace

// PKG-10: a bare name (a default, or a name without a directory) is looked for in the system
// directory only (System32, where the GPU drivers install their runtime DLLs), never in the
// current directory or PATH; a path is loaded as given, made absolute, its dependencies looked
// for next to it and in the system directories. No error dialog box on failure.
void* OpenLibrary(const std::string& name, std::string* error) {
  std::wstring target = Widen(name);
  DWORD flags = LOAD_LIBRARY_SEARCH_SYSTEM32;
  if (!IsBareName(name)) {
    const DWORD n = GetFullPathNameW(target.c_str(), 0, nullptr, nullptr);
    if (n > 0) {
      std::wstring full(n, L'\0');
      const DWORD written = GetFullPathNameW(target.c_str(), n, &full[0], nullptr);
      if (written > 0 && written < n) {
        full.resize(written);
        target = full;
      }
    }
    flags = LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS;
  }
  DWORD old_mode = 0;
  const bool mode_set = SetThreadErrorMode(SEM_FAILCRITICALERRORS, &old_mode) != 0;
  HMODULE module = LoadLibraryExW(target.c_str(), nullptr, flags);
  const DWORD code = module == nullptr ? GetLastError() : 0;
  if (mode_set) SetThreadErrorMode(old_mode, nullptr);
  if (module == nullptr) *error = name + ": " + SystemMessage(code);
  return reinterpret_cast<void*>(module);
}

void* LibrarySymbol(void* handle, const char* name) {
  const FARPROC fn = GetProcAddress(static_cast<HMODULE>(handle), name);
  // A function's address as the backends' void*: both are pointer-sized on Windows.
  void* address = nullptr;
  static_assert(sizeof address == sizeof fn, "FARPROC fits a void*");
  std::memcpy(&address, &fn, sizeof address);
  return address;
}

std::vector<std::string> HipRuntimeNames() {
  return {"amdhip64_7.dll", "amdhip64_6.dll", "amdhip64.dll"};
}

#else  // POSIX

// PKG-10 (POSIX half): the dynamic loader's own search (LD_LIBRARY_PATH, the cache, the
// system directories; never the current directory), every symbol bound now, none made global.
void* OpenLibrary(const std::string& name, std::string* error) {
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    *error = why != nullptr ? std::string(why) : name + ": cannot be loaded";
  }
  return handle;
}

void* LibrarySymbol(void* handle, const char* name) { return dlsym(handle, name); }

std::vector<std::string> HipRuntimeNames() {
  return {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
}

#endif

}  // namespace detail
}  // namespace dlbridge
