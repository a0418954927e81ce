/* The test API of the fake GPU runtimes (fake_cuda_driver.c: libdlbridge_fake_cuda.so;
 * fake_hip_runtime.c: libdlbridge_fake_hip.so). Tests reach it with dlsym on the library's
 * path (C++: DLBRIDGE_TEST_FAKE_CUDA / DLBRIDGE_TEST_FAKE_HIP; Python: ctypes.CDLL on
 * $DLBRIDGE_FAKE_CUDA_DRIVER / $DLBRIDGE_FAKE_HIP_RUNTIME), the same path dlbridge loads, so
 * both see one copy of the fake's state. Every fake call is serialised by one lock. */
#ifndef DLBRIDGE_TESTS_FAKE_DRIVER_H_
#define DLBRIDGE_TESTS_FAKE_DRIVER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forgets the log, the events, the pending failures and (this thread's) context stack or
 * current device; the CUDA fake also drops its primary-context references. */
typedef void (*fake_driver_reset_fn)(void);
/* One line per call since the last reset, e.g. "cuEventCreate flags=2 -> ev1",
 * "cuEventRecord ev1 stream=0x1234", "cuStreamWaitEvent stream=0x1 ev1", "cuEventDestroy ev1"
 * (HIP: "hipSetDevice 1", "hipEventCreateWithFlags flags=2 device=1 -> ev1", ...); an injected
 * failure is "<call> -> error <status> (injected)". Valid until the next fake_driver_log. */
typedef const char* (*fake_driver_log_fn)(void);
/* The next call named `call_name` (e.g. "cuStreamWaitEvent", "hipEventRecord"; the CUDA fake
 * also takes "cuGetProcAddress:<entry point>" to hide one at load, the HIP fake
 * "hipSetDevice:<device>" to fail only the call that selects that device) returns `status`. */
typedef void (*fake_driver_fail_fn)(const char* call_name, int status);
/* Events created and not destroyed. */
typedef int (*fake_driver_live_events_fn)(void);
/* Device allocations (cuMemAlloc / hipMalloc) not freed. They are blocks of the fake device
 * range, 256-byte aligned; the copy calls (cuMemcpy*Async, hipMemcpyAsync) copy host memory
 * and log device addresses as offsets into the range ("dev+0x100"), host ones as "host". */
typedef int (*fake_driver_live_allocations_fn)(void);
/* Events created since the last reset (bench/: event creations per exchange). */
typedef long (*fake_driver_events_created_fn)(void);
/* 1: calls are still counted and can still fail, but not logged (a benchmark's millions of
 * calls would grow the log without bound); 0: logged again. Reset sets 0. */
typedef void (*fake_driver_quiet_fn)(int quiet);
/* The start of the 1 MiB range the fake's pointer queries report as device memory of
 * device 0 (fake_driver_device_bytes: its size). */
typedef void* (*fake_driver_device_base_fn)(void);
typedef size_t (*fake_driver_device_bytes_fn)(void);
/* CUDA only: this thread's context-stack depth; primary-context references held. */
typedef int (*fake_driver_context_depth_fn)(void);
typedef int (*fake_driver_retained_contexts_fn)(void);
/* HIP only: this thread's current device. */
typedef int (*fake_driver_current_device_fn)(void);
/* Level Zero only (fake_level_zero.c: libdlbridge_fake_level_zero.so): the one device's
 * handle; immediate command lists created and not destroyed. */
typedef void* (*fake_driver_level_zero_device_fn)(void);
typedef int (*fake_driver_live_command_lists_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLBRIDGE_TESTS_FAKE_DRIVER_H_ */
