/* What the tests need from the platform, once for POSIX and Windows (C99 and C++): opening a
 * shared library by path and finding a function in it (the fake GPU runtimes, tests/fakes), and
 * setting or removing an environment variable, and running a function on another thread. The
 * library's own loader is
 * src/runtimes/dynamic_library.cpp; this is the tests' copy of the two calls they need. */
#ifndef DLBRIDGE_TESTS_PLATFORM_H_
#define DLBRIDGE_TESTS_PLATFORM_H_

#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
/* The backends' default library names on this platform (src/runtimes/dynamic_library.h). */
#define DLBTEST_CUDA_DEFAULT_LIBRARY "nvcuda.dll"
#else
#include <dlfcn.h>
#include <pthread.h>
#define DLBTEST_CUDA_DEFAULT_LIBRARY "libcuda.so.1"
#endif

/* The library at `path` (the same module dlbridge gets when it loads that path), or NULL. */
static inline void* DlbTestOpenLibrary(const char* path) {
#ifdef _WIN32
  return (void*)LoadLibraryA(path);
#else
  return dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
}

/* The address of `name` in `handle`, as an object pointer (copied, not cast: ISO C has no
 * conversion between function and object pointers), or NULL. */
static inline void* DlbTestSymbol(void* handle, const char* name) {
  void* address = NULL;
  if (handle == NULL) return NULL;
#ifdef _WIN32
  {
    FARPROC fn = GetProcAddress((HMODULE)handle, name);
    memcpy(&address, &fn, sizeof address);
  }
#else
  address = dlsym(handle, name);
#endif
  return address;
}

/* Sets `name` to `value`, or removes it when `value` is NULL; 0 on success. */
static inline int DlbTestSetEnv(const char* name, const char* value) {
#ifdef _WIN32
  return _putenv_s(name, value != NULL ? value : "");
#else
  return value != NULL ? setenv(name, value, 1) : unsetenv(name);
#endif
}

/* Runs fn(arg) on a new thread and waits for it; 0 on success (the C API test's thread-local
 * error check: CreateThread on Windows, so MSVC needs no pthreads). */
#ifdef _WIN32
typedef struct DlbTestThreadCall {
  void (*fn)(void*);
  void* arg;
} DlbTestThreadCall;
static DWORD WINAPI DlbTestThreadMain(LPVOID call) {
  ((DlbTestThreadCall*)call)->fn(((DlbTestThreadCall*)call)->arg);
  return 0;
}
static inline int DlbTestRunOnThread(void (*fn)(void*), void* arg) {
  DlbTestThreadCall call;
  HANDLE thread;
  call.fn = fn;
  call.arg = arg;
  thread = CreateThread(NULL, 0, DlbTestThreadMain, &call, 0, NULL);
  if (thread == NULL) return -1;
  WaitForSingleObject(thread, INFINITE);
  CloseHandle(thread);
  return 0;
}
#else
typedef struct DlbTestThreadCall {
  void (*fn)(void*);
  void* arg;
} DlbTestThreadCall;
static void* DlbTestThreadMain(void* call) {
  ((DlbTestThreadCall*)call)->fn(((DlbTestThreadCall*)call)->arg);
  return NULL;
}
static inline int DlbTestRunOnThread(void (*fn)(void*), void* arg) {
  DlbTestThreadCall call;
  pthread_t thread;
  call.fn = fn;
  call.arg = arg;
  if (pthread_create(&thread, NULL, DlbTestThreadMain, &call) != 0) return -1;
  return pthread_join(thread, NULL);
}
#endif

#ifdef __cplusplus
#include <string>

namespace dlbtest {
/// Sets (or, with nullptr, removes) an environment variable for its lifetime, then puts back
/// what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    DlbTestSetEnv(name, value);
  }
  ~ScopedEnv() { DlbTestSetEnv(name_.c_str(), had_ ? old_.c_str() : nullptr); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};
}  // namespace dlbtest
#endif

#endif /* DLBRIDGE_TESTS_PLATFORM_H_ */
