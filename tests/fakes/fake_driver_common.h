/* What the fake GPU runtimes (fake_cuda_driver.c, fake_hip_runtime.c) share: the call log,
 * the injected failures, the event table and the fake device range. Everything here is static:
 * each fake library has its own copy, and nothing but the entry points is exported, so two
 * fakes loaded side by side never resolve to each other's state. The test-facing API is
 * described in fake_driver.h. */
#ifndef DLBRIDGE_TESTS_FAKE_DRIVER_COMMON_H_
#define DLBRIDGE_TESTS_FAKE_DRIVER_COMMON_H_

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Windows (MinGW and MSVC): a DLL's exports and an SRW lock (no pthreads needed). */
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#define FAKE_EXPORT __declspec(dllexport)
#define FAKE_LOCK_TYPE SRWLOCK
#define FAKE_LOCK_INIT SRWLOCK_INIT
#define FAKE_LOCK(m) AcquireSRWLockExclusive(m)
#define FAKE_UNLOCK(m) ReleaseSRWLockExclusive(m)
#ifdef _MSC_VER
#define FAKE_ALIGNED_4096 __declspec(align(4096))
#else
#define FAKE_ALIGNED_4096 __attribute__((aligned(4096)))
#endif
#else
#include <pthread.h>
#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_LOCK_TYPE pthread_mutex_t
#define FAKE_LOCK_INIT PTHREAD_MUTEX_INITIALIZER
#define FAKE_LOCK(m) pthread_mutex_lock(m)
#define FAKE_UNLOCK(m) pthread_mutex_unlock(m)
#define FAKE_ALIGNED_4096 __attribute__((aligned(4096)))
#endif

#define FAKE_MAX_EVENTS 4096
#define FAKE_MAX_FAILURES 16
#define FAKE_DEVICE_BYTES (1u << 20)

/* The calls are serialised: tests may order streams from several threads. */
static FAKE_LOCK_TYPE fake_mutex = FAKE_LOCK_INIT;
static char* fake_log_text = NULL;
static size_t fake_log_size = 0;
static size_t fake_log_capacity = 0;
static char* fake_log_copy = NULL;                 /* what fake_driver_log last returned */
static unsigned char fake_events[FAKE_MAX_EVENTS]; /* 1: created, not destroyed */
static int fake_next_event = 0;
static int fake_live_events = 0;
static long fake_events_created = 0; /* since the last reset */
static int fake_quiet = 0;           /* 1: calls are counted, not logged (benchmarks) */
static struct {
  char name[64];
  int status;
} fake_failures[FAKE_MAX_FAILURES];
/* Real memory, so that a test that does touch "device" bytes by mistake reads zeros. */
static FAKE_ALIGNED_4096 unsigned char fake_device_memory[FAKE_DEVICE_BYTES];

static void FakeLock(void) { FAKE_LOCK(&fake_mutex); }
static void FakeUnlock(void) { FAKE_UNLOCK(&fake_mutex); }

/* Appends one line (caller holds the lock). */
static void FakeLog(const char* format, ...) {
  if (fake_quiet) return;
  char line[256];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  if (n < 0) return;
  if ((size_t)n >= sizeof line) n = (int)sizeof line - 1;
  if (fake_log_size + (size_t)n + 2 > fake_log_capacity) {
    size_t capacity = fake_log_capacity ? fake_log_capacity * 2 : 4096;
    while (capacity < fake_log_size + (size_t)n + 2) capacity *= 2;
    char* grown = (char*)realloc(fake_log_text, capacity);
    if (grown == NULL) return;
    fake_log_text = grown;
    fake_log_capacity = capacity;
  }
  memcpy(fake_log_text + fake_log_size, line, (size_t)n);
  fake_log_size += (size_t)n;
  fake_log_text[fake_log_size++] = '\n';
  fake_log_text[fake_log_size] = '\0';
}

/* The status an injected failure gives `call`, consuming it; 0 when none (caller holds the
 * lock). */
static int FakeTakeFailure(const char* call) {
  for (int i = 0; i < FAKE_MAX_FAILURES; ++i) {
    if (fake_failures[i].name[0] != '\0' && strcmp(fake_failures[i].name, call) == 0) {
      fake_failures[i].name[0] = '\0';
      return fake_failures[i].status;
    }
  }
  return 0;
}

static void FakeAddFailure(const char* call, int status) {
  if (call == NULL) return;
  FakeLock();
  for (int i = 0; i < FAKE_MAX_FAILURES; ++i) {
    if (fake_failures[i].name[0] == '\0') {
      snprintf(fake_failures[i].name, sizeof fake_failures[i].name, "%s", call);
      fake_failures[i].status = status;
      break;
    }
  }
  FakeUnlock();
}

/* Event handles are small numbers (1, 2, ...) dressed as pointers; never dereferenced. */
static void* FakeEventHandle(int id) { return (void*)(uintptr_t)(0xE0000u + (unsigned)id); }
static int FakeEventId(const void* handle) {
  const uintptr_t v = (uintptr_t)handle;
  if (v <= 0xE0000u || v >= 0xE0000u + FAKE_MAX_EVENTS) return -1;
  const int id = (int)(v - 0xE0000u);
  return fake_events[id] ? id : -1;
}
/* A new live event's id, or -1 when the table is full (caller holds the lock). */
static int FakeNewEvent(void) {
  if (fake_next_event + 1 >= FAKE_MAX_EVENTS) return -1;
  const int id = ++fake_next_event;
  fake_events[id] = 1;
  ++fake_live_events;
  ++fake_events_created;
  return id;
}
static void FakeDestroyEvent(int id) {
  fake_events[id] = 0;
  --fake_live_events;
}

static int FakeIsDevicePointer(uintptr_t p) {
  const uintptr_t base = (uintptr_t)fake_device_memory;
  return p >= base && p < base + FAKE_DEVICE_BYTES;
}

/* Device allocations: blocks of the fake device range, 256-byte aligned as the real
 * runtimes' are, first fit (caller holds the lock). */
#define FAKE_MAX_BLOCKS 256
static struct {
  size_t offset;
  size_t size; /* 0: a free slot */
} fake_blocks[FAKE_MAX_BLOCKS];
static int fake_live_allocations = 0;

/* A new block's address, or NULL when the range or the table is full. */
static void* FakeAllocate(size_t size) {
  if (size == 0 || size > FAKE_DEVICE_BYTES) return NULL;
  int slot = -1;
  for (int i = 0; i < FAKE_MAX_BLOCKS && slot < 0; ++i) {
    if (fake_blocks[i].size == 0) slot = i;
  }
  if (slot < 0) return NULL;
  size_t at = 0;
  for (int moved = 1; moved;) {
    moved = 0;
    for (int i = 0; i < FAKE_MAX_BLOCKS; ++i) {
      const size_t o = fake_blocks[i].offset;
      const size_t n = fake_blocks[i].size;
      if (n != 0 && at < o + n && o < at + size) {
        at = (o + n + 255u) & ~(size_t)255u;
        moved = 1;
      }
    }
  }
  if (at + size > FAKE_DEVICE_BYTES) return NULL;
  fake_blocks[slot].offset = at;
  fake_blocks[slot].size = size;
  ++fake_live_allocations;
  return fake_device_memory + at;
}
/* Frees the block that starts at `p`: 0, or -1 when no live block starts there. */
static int FakeFree(const void* p) {
  for (int i = 0; i < FAKE_MAX_BLOCKS; ++i) {
    if (fake_blocks[i].size != 0 && fake_device_memory + fake_blocks[i].offset == p) {
      fake_blocks[i].size = 0;
      --fake_live_allocations;
      return 0;
    }
  }
  return -1;
}
/* Whether [p, p + n) lies inside the fake device range. */
static int FakeDeviceRange(const void* p, size_t n) {
  const uintptr_t base = (uintptr_t)fake_device_memory;
  const uintptr_t at = (uintptr_t)p;
  return at >= base && n <= FAKE_DEVICE_BYTES && at - base <= FAKE_DEVICE_BYTES - n;
}
/* A device address as its offset in the range ("dev+0x100"), a host one as "host". */
static const char* FakeWhere(const void* p, char* text, size_t size) {
  if (FakeIsDevicePointer((uintptr_t)p)) {
    snprintf(text, size, "dev+0x%llx",
             (unsigned long long)((uintptr_t)p - (uintptr_t)fake_device_memory));
  } else {
    snprintf(text, size, "host");
  }
  return text;
}

static void FakeResetCommon(void) {
  free(fake_log_text);
  fake_log_text = NULL;
  fake_log_size = fake_log_capacity = 0;
  memset(fake_events, 0, sizeof fake_events);
  fake_next_event = 0;
  fake_live_events = 0;
  memset(fake_failures, 0, sizeof fake_failures);
  memset(fake_blocks, 0, sizeof fake_blocks);
  fake_live_allocations = 0;
  fake_events_created = 0;
  fake_quiet = 0;
}

static const char* FakeLogCopy(void) {
  FakeLock();
  free(fake_log_copy);
  const char* text = fake_log_text != NULL ? fake_log_text : "";
  const size_t n = strlen(text) + 1;
  fake_log_copy = (char*)malloc(n); /* a copy: the log may grow while the test reads it */
  if (fake_log_copy != NULL) memcpy(fake_log_copy, text, n);
  FakeUnlock();
  return fake_log_copy != NULL ? fake_log_copy : "";
}

/* The test API both fakes export (fake_driver.h). */
#define FAKE_DEFINE_TEST_API(reset_extra)                                               \
  FAKE_EXPORT void fake_driver_reset(void) {                                            \
    FakeLock();                                                                         \
    FakeResetCommon();                                                                  \
    reset_extra;                                                                        \
    FakeUnlock();                                                                       \
  }                                                                                     \
  FAKE_EXPORT const char* fake_driver_log(void) { return FakeLogCopy(); }               \
  FAKE_EXPORT void fake_driver_fail(const char* call_name, int status) {                \
    FakeAddFailure(call_name, status);                                                  \
  }                                                                                     \
  FAKE_EXPORT int fake_driver_live_events(void) {                                       \
    FakeLock();                                                                         \
    const int n = fake_live_events;                                                     \
    FakeUnlock();                                                                       \
    return n;                                                                           \
  }                                                                                     \
  FAKE_EXPORT int fake_driver_live_allocations(void) {                                  \
    FakeLock();                                                                         \
    const int n = fake_live_allocations;                                                \
    FakeUnlock();                                                                       \
    return n;                                                                           \
  }                                                                                     \
  FAKE_EXPORT long fake_driver_events_created(void) {                                   \
    FakeLock();                                                                         \
    const long n = fake_events_created;                                                 \
    FakeUnlock();                                                                       \
    return n;                                                                           \
  }                                                                                     \
  FAKE_EXPORT void fake_driver_quiet(int quiet) {                                       \
    FakeLock();                                                                         \
    fake_quiet = quiet;                                                                 \
    FakeUnlock();                                                                       \
  }                                                                                     \
  FAKE_EXPORT void* fake_driver_device_base(void) { return (void*)fake_device_memory; } \
  FAKE_EXPORT size_t fake_driver_device_bytes(void) { return FAKE_DEVICE_BYTES; }

#endif /* DLBRIDGE_TESTS_FAKE_DRIVER_COMMON_H_ */
