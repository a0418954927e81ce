/* A fake Level Zero loader (libze_loader.so.1) for tests without a GPU: dlbridge loads it
 * through DLBRIDGE_LEVEL_ZERO_LIBRARY or testing::SetRuntimeLibrary, and its Level Zero backend
 * runs unchanged against it. One driver with one root device (no sub-devices); any non-null
 * context is accepted; the 1 MiB range of fake_driver_device_base is device memory of that
 * device. It logs the memory and copy calls (zeMemAllocDevice, zeMemFree, the immediate
 * command list and its copy) and fails a named call on request (fake_driver.h). Types are the
 * loader's ABI written out here, so no Level Zero header is needed. */
/* Level Zero has no events or stream-ordered copies here: the shared event helpers go unused. */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fake_driver_common.h"

typedef unsigned ze_result_t;
typedef void* ze_handle_t;

enum {
  kSuccess = 0,
  kInvalidNullHandle = 0x78000004u, /* ZE_RESULT_ERROR_INVALID_NULL_HANDLE */
  kInvalidArgument = 0x78000004u,   /* the fake answers every bad argument with it */
};

#define FAKE_DRIVER ((ze_handle_t)(uintptr_t)0xD0001u)
#define FAKE_DEVICE ((ze_handle_t)(uintptr_t)0xDE001u)
#define FAKE_LIST ((ze_handle_t)(uintptr_t)0xC1001u)

/* ze_memory_allocation_properties_t as the loader lays it out. */
typedef struct {
  unsigned stype;
  void* pNext;
  unsigned type; /* ZE_MEMORY_TYPE_DEVICE = 2 */
  uint64_t id;
  uint64_t pageSize;
} FakeAllocationProperties;

static int fake_live_lists = 0;

static int Begin(const char* call) {
  FakeLock();
  const int status = FakeTakeFailure(call);
  if (status != 0) FakeLog("%s -> error %d (injected)", call, status);
  return status;
}
static ze_result_t End(ze_result_t r) {
  FakeUnlock();
  return r;
}

FAKE_EXPORT ze_result_t zeInit(unsigned flags) {
  (void)flags;
  return End((ze_result_t)Begin("zeInit"));
}

FAKE_EXPORT ze_result_t zeDriverGet(uint32_t* count, ze_handle_t* drivers) {
  const int f = Begin("zeDriverGet");
  if (f != 0) return End((ze_result_t)f);
  if (drivers != NULL && *count >= 1) drivers[0] = FAKE_DRIVER;
  *count = 1;
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeDriverGetApiVersion(ze_handle_t driver, unsigned* version) {
  (void)driver;
  *version = 0x10008u; /* 1.8 */
  return kSuccess;
}

FAKE_EXPORT ze_result_t zeDeviceGet(ze_handle_t driver, uint32_t* count, ze_handle_t* devices) {
  if (driver != FAKE_DRIVER) return kInvalidNullHandle;
  if (devices != NULL && *count >= 1) devices[0] = FAKE_DEVICE;
  *count = 1;
  return kSuccess;
}

FAKE_EXPORT ze_result_t zeDeviceGetSubDevices(ze_handle_t device, uint32_t* count,
                                              ze_handle_t* subs) {
  (void)device;
  (void)subs;
  *count = 0;
  return kSuccess;
}

FAKE_EXPORT ze_result_t zeMemGetAllocProperties(ze_handle_t context, const void* pointer,
                                                FakeAllocationProperties* properties,
                                                ze_handle_t* device) {
  const int f = Begin("zeMemGetAllocProperties");
  if (f != 0) return End((ze_result_t)f);
  if (context == NULL) return End(kInvalidNullHandle);
  const int on_device = FakeIsDevicePointer((uintptr_t)pointer);
  properties->type = on_device ? 2u : 0u;
  properties->id = 0;
  properties->pageSize = 0;
  if (device != NULL) *device = on_device ? FAKE_DEVICE : NULL;
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeMemAllocDevice(ze_handle_t context, const void* desc, size_t size,
                                         size_t alignment, ze_handle_t device, void** pointer) {
  const int f = Begin("zeMemAllocDevice");
  if (f != 0) return End((ze_result_t)f);
  if (context == NULL || device != FAKE_DEVICE || desc == NULL) return End(kInvalidNullHandle);
  void* p = alignment <= 256 ? FakeAllocate(size) : NULL;
  if (p == NULL) return End(0x70000002u); /* ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY */
  *pointer = p;
  char where[32];
  FakeLog("zeMemAllocDevice size=%zu alignment=%zu -> %s", size, alignment,
          FakeWhere(p, where, sizeof where));
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeMemFree(ze_handle_t context, void* pointer) {
  const int f = Begin("zeMemFree");
  if (f != 0) return End((ze_result_t)f);
  char where[32];
  if (context == NULL || FakeFree(pointer) != 0) {
    FakeLog("zeMemFree %s -> invalid (not allocated)", FakeWhere(pointer, where, sizeof where));
    return End(kInvalidArgument);
  }
  FakeLog("zeMemFree %s", FakeWhere(pointer, where, sizeof where));
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeCommandListCreateImmediate(ze_handle_t context, ze_handle_t device,
                                                     const void* desc, ze_handle_t* list) {
  const int f = Begin("zeCommandListCreateImmediate");
  if (f != 0) return End((ze_result_t)f);
  if (context == NULL || device != FAKE_DEVICE || desc == NULL) return End(kInvalidNullHandle);
  ++fake_live_lists;
  *list = FAKE_LIST;
  FakeLog("zeCommandListCreateImmediate -> list");
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeCommandListAppendMemoryCopy(ze_handle_t list, void* to, const void* from,
                                                      size_t size, ze_handle_t signal,
                                                      uint32_t waits, ze_handle_t* wait_events) {
  (void)signal;
  (void)wait_events;
  const int f = Begin("zeCommandListAppendMemoryCopy");
  if (f != 0) return End((ze_result_t)f);
  if (list != FAKE_LIST || waits != 0) return End(kInvalidNullHandle);
  memmove(to, from, size);
  char a[32], b[32];
  FakeLog("zeCommandListAppendMemoryCopy %s <- %s size=%zu", FakeWhere(to, a, sizeof a),
          FakeWhere(from, b, sizeof b), size);
  return End(kSuccess);
}

FAKE_EXPORT ze_result_t zeCommandListDestroy(ze_handle_t list) {
  const int f = Begin("zeCommandListDestroy");
  if (f != 0) return End((ze_result_t)f);
  if (list != FAKE_LIST) return End(kInvalidNullHandle);
  --fake_live_lists;
  FakeLog("zeCommandListDestroy list");
  return End(kSuccess);
}

/* The test API (fake_driver.h). */
FAKE_DEFINE_TEST_API(fake_live_lists = 0)

/* Level Zero only: the fake's device handle (for CopyOptions::level_zero_device) and the
 * immediate command lists created and not destroyed. */
FAKE_EXPORT void* fake_driver_level_zero_device(void) { return FAKE_DEVICE; }
FAKE_EXPORT int fake_driver_live_command_lists(void) {
  FakeLock();
  const int n = fake_live_lists;
  FakeUnlock();
  return n;
}
