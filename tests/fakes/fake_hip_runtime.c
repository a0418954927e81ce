/* A fake HIP runtime (libamdhip64.so) for tests without a GPU: dlbridge loads it through
 * DLBRIDGE_HIP_LIBRARY or testing::SetRuntimeLibrary, and its HIP backend runs unchanged
 * against it. It reports ROCm 5.2 with two devices, one 1 MiB range of "device memory" of
 * device 0 (fake_driver_device_base), and logs every device, event and wait call. The test API
 * is in fake_driver.h. Types are HIP's ABI written out here, so no HIP header is needed. */
#include "fake_driver_common.h"

typedef int hipError_t;
typedef void* hipEvent_t;
typedef void* hipStream_t;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kInvalidDevice = 101,
  kInvalidHandle = 400,
};

#define FAKE_DEVICES 2

/* hipPointerAttribute_t as ROCm 5 and 6 lay it out. */
typedef struct {
  int type;
  int device;
  void* devicePointer;
  void* hostPointer;
  int isManaged;
  unsigned allocationFlags;
} FakePointerAttributes;

static _Thread_local int fake_current_device = 0; /* per thread, as HIP's is */

static int Begin(const char* call) {
  FakeLock();
  const int status = FakeTakeFailure(call);
  if (status != 0) FakeLog("%s -> error %d (injected)", call, status);
  return status;
}
static hipError_t End(hipError_t e) {
  FakeUnlock();
  return e;
}

FAKE_EXPORT hipError_t hipRuntimeGetVersion(int* version) {
  const int f = Begin("hipRuntimeGetVersion");
  if (f == 0) *version = 50200000; /* ROCm 5.2: major * 10'000'000 + minor * 100'000 */
  return End(f);
}

FAKE_EXPORT hipError_t hipGetDeviceCount(int* count) {
  const int f = Begin("hipGetDeviceCount");
  if (f == 0) *count = FAKE_DEVICES;
  return End(f);
}

FAKE_EXPORT const char* hipGetErrorName(hipError_t error) {
  switch (error) {
    case kSuccess: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kOutOfMemory: return "hipErrorOutOfMemory";
    case 100: return "hipErrorNoDevice";
    case kInvalidDevice: return "hipErrorInvalidDevice";
    case kInvalidHandle: return "hipErrorInvalidHandle";
    default: return "hipErrorUnknown";
  }
}

/* ROCm 5 numbering: device memory is type 1; a pointer HIP does not know is
 * hipErrorInvalidValue. */
FAKE_EXPORT hipError_t hipPointerGetAttributes(FakePointerAttributes* attributes,
                                               const void* pointer) {
  const int f = Begin("hipPointerGetAttributes");
  if (f != 0) return End(f);
  if (!FakeIsDevicePointer((uintptr_t)pointer)) return End(kInvalidValue);
  memset(attributes, 0, sizeof *attributes);
  attributes->type = 1;
  attributes->device = 0;
  attributes->devicePointer = (void*)pointer;
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipGetDevice(int* device) {
  const int f = Begin("hipGetDevice");
  if (f != 0) return End(f);
  *device = fake_current_device;
  FakeLog("hipGetDevice -> %d", fake_current_device);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipSetDevice(int device) {
  /* "hipSetDevice:<device>" fails only the call that selects that device (fake_driver.h). */
  char named[32];
  snprintf(named, sizeof named, "hipSetDevice:%d", device);
  int f = Begin(named);
  if (f == 0 && (f = FakeTakeFailure("hipSetDevice")) != 0) {
    FakeLog("hipSetDevice -> error %d (injected)", f);
  }
  if (f != 0) return End(f);
  if (device < 0 || device >= FAKE_DEVICES) {
    FakeLog("hipSetDevice %d -> hipErrorInvalidDevice", device);
    return End(kInvalidDevice);
  }
  fake_current_device = device;
  FakeLog("hipSetDevice %d", device);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags) {
  const int f = Begin("hipEventCreateWithFlags");
  if (f != 0) return End(f);
  const int id = FakeNewEvent();
  if (id < 0) return End(kOutOfMemory);
  *event = FakeEventHandle(id);
  FakeLog("hipEventCreateWithFlags flags=%u device=%d -> ev%d", flags, fake_current_device, id);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  const int f = Begin("hipEventRecord");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0) return End(kInvalidHandle);
  FakeLog("hipEventRecord ev%d stream=0x%llx", id, (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned flags) {
  const int f = Begin("hipStreamWaitEvent");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0) return End(kInvalidHandle);
  if (flags != 0) return End(kInvalidValue);
  FakeLog("hipStreamWaitEvent stream=0x%llx ev%d", (unsigned long long)(uintptr_t)stream, id);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipEventDestroy(hipEvent_t event) {
  const int f = Begin("hipEventDestroy");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0) return End(kInvalidHandle);
  FakeDestroyEvent(id);
  FakeLog("hipEventDestroy ev%d", id);
  return End(kSuccess);
}

/* Memory and copies on the fake device range (hipMemcpyKind: 1 host to device, 2 device to
 * host, 3 device to device). */
FAKE_EXPORT hipError_t hipMalloc(void** pointer, size_t bytes) {
  const int f = Begin("hipMalloc");
  if (f != 0) return End(f);
  void* p = FakeAllocate(bytes);
  if (p == NULL) return End(kOutOfMemory);
  *pointer = p;
  char where[32];
  FakeLog("hipMalloc bytes=%zu device=%d -> %s", bytes, fake_current_device,
          FakeWhere(p, where, sizeof where));
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipFree(void* pointer) {
  const int f = Begin("hipFree");
  if (f != 0) return End(f);
  char where[32];
  if (FakeFree(pointer) != 0) {
    FakeLog("hipFree %s -> hipErrorInvalidValue (not allocated)",
            FakeWhere(pointer, where, sizeof where));
    return End(kInvalidValue);
  }
  FakeLog("hipFree %s", FakeWhere(pointer, where, sizeof where));
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipMemcpyAsync(void* to, const void* from, size_t bytes, int kind,
                                      hipStream_t stream) {
  const int f = Begin("hipMemcpyAsync");
  if (f != 0) return End(f);
  const int to_device = kind == 1 || kind == 3;
  const int from_device = kind == 2 || kind == 3;
  if (kind < 1 || kind > 3 || (to_device && !FakeDeviceRange(to, bytes)) ||
      (from_device && !FakeDeviceRange(from, bytes))) {
    FakeLog("hipMemcpyAsync kind=%d -> hipErrorInvalidValue", kind);
    return End(kInvalidValue);
  }
  memmove(to, from, bytes);
  char a[32], b[32];
  FakeLog("hipMemcpyAsync %s <- %s bytes=%zu kind=%d stream=0x%llx", FakeWhere(to, a, sizeof a),
          FakeWhere(from, b, sizeof b), bytes, kind, (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

FAKE_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  const int f = Begin("hipStreamSynchronize");
  if (f != 0) return End(f);
  FakeLog("hipStreamSynchronize stream=0x%llx", (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

/* The test API (fake_driver.h). */
FAKE_DEFINE_TEST_API(fake_current_device = 0)

FAKE_EXPORT int fake_driver_current_device(void) { return fake_current_device; }
