/* A fake CUDA driver (libcuda.so.1) for tests without a GPU: dlbridge loads it through
 * DLBRIDGE_CUDA_LIBRARY or testing::SetRuntimeLibrary, and its CUDA backend runs unchanged
 * against it. It reports two devices, one 1 MiB range of "device memory" of device 0
 * (fake_driver_device_base), and logs every context, event and wait call, as the real driver
 * would see them; like the real driver, event calls need a current context. The test API is in
 * fake_driver.h. Types are the driver's ABI written out here, so no cuda.h is needed. */
#include "fake_driver_common.h"

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUevent;
typedef void* CUstream;
typedef unsigned long long CUdeviceptr;

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kInvalidDevice = 101,
  kInvalidContext = 201,
  kInvalidHandle = 400,
  kNotFound = 500,
};

#define FAKE_DEVICES 2
#define FAKE_MAX_DEPTH 16

static int fake_retained[FAKE_DEVICES]; /* primary-context references per device */
/* The context stack is per thread, as the driver's is. */
static _Thread_local CUcontext fake_stack[FAKE_MAX_DEPTH];
static _Thread_local int fake_depth = 0;

static CUcontext PrimaryContext(int dev) {
  return (CUcontext)(uintptr_t)(0xC0000u + (unsigned)dev);
}
static int ContextDevice(CUcontext ctx) {
  const uintptr_t v = (uintptr_t)ctx;
  return v >= 0xC0000u && v < 0xC0000u + FAKE_DEVICES ? (int)(v - 0xC0000u) : -1;
}

/* Starts a call: takes the lock, and returns the injected failure's status (logged) or 0. */
static int Begin(const char* call) {
  FakeLock();
  const int status = FakeTakeFailure(call);
  if (status != 0) FakeLog("%s -> error %d (injected)", call, status);
  return status;
}
static CUresult End(CUresult r) {
  FakeUnlock();
  return r;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  const int f = Begin("cuInit");
  return End(f);
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  const int f = Begin("cuDriverGetVersion");
  if (f == 0) *version = 12080;
  return End(f);
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  const int f = Begin("cuDeviceGetCount");
  if (f == 0) *count = FAKE_DEVICES;
  return End(f);
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case 3: *name = "CUDA_ERROR_NOT_INITIALIZED"; return kSuccess;
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return kSuccess;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidContext: *name = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
    case kInvalidHandle: *name = "CUDA_ERROR_INVALID_HANDLE"; return kSuccess;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
    case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kSuccess;
    case 999: *name = "CUDA_ERROR_UNKNOWN"; return kSuccess;
    default: *name = NULL; return kInvalidValue;
  }
}

/* Memory type (2), is-managed (8) and device ordinal (9), as the backend asks them. */
FAKE_EXPORT CUresult cuPointerGetAttributes(unsigned int count, const int* attributes, void** data,
                                            CUdeviceptr pointer) {
  const int f = Begin("cuPointerGetAttributes");
  if (f != 0) return End(f);
  const int device = FakeIsDevicePointer((uintptr_t)pointer);
  for (unsigned int i = 0; i < count; ++i) {
    switch (attributes[i]) {
      case 2: *(unsigned int*)data[i] = device ? 2u /* CU_MEMORYTYPE_DEVICE */ : 0u; break;
      case 8: *(unsigned char*)data[i] = 0; break; /* the driver writes a bool */
      case 9:
        if (device) *(int*)data[i] = 0;
        break;
      default: return End(kInvalidValue);
    }
  }
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  const int f = Begin("cuDeviceGet");
  if (f != 0) return End(f);
  if (ordinal < 0 || ordinal >= FAKE_DEVICES) {
    FakeLog("cuDeviceGet ordinal=%d -> CUDA_ERROR_INVALID_DEVICE", ordinal);
    return End(kInvalidDevice);
  }
  *device = ordinal;
  FakeLog("cuDeviceGet ordinal=%d -> dev%d", ordinal, ordinal);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice device) {
  const int f = Begin("cuDevicePrimaryCtxRetain");
  if (f != 0) return End(f);
  if (device < 0 || device >= FAKE_DEVICES) return End(kInvalidDevice);
  ++fake_retained[device];
  *ctx = PrimaryContext(device);
  FakeLog("cuDevicePrimaryCtxRetain dev%d -> ctx%d", device, device);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  const int f = Begin("cuDevicePrimaryCtxRelease");
  if (f != 0) return End(f);
  if (device < 0 || device >= FAKE_DEVICES) return End(kInvalidDevice);
  if (fake_retained[device] == 0) return End(kInvalidContext);
  --fake_retained[device];
  FakeLog("cuDevicePrimaryCtxRelease dev%d", device);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  const int f = Begin("cuCtxPushCurrent");
  if (f != 0) return End(f);
  if (ContextDevice(ctx) < 0) return End(kInvalidContext);
  if (fake_depth == FAKE_MAX_DEPTH) return End(kOutOfMemory);
  fake_stack[fake_depth++] = ctx;
  FakeLog("cuCtxPushCurrent ctx%d", ContextDevice(ctx));
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  const int f = Begin("cuCtxPopCurrent");
  if (f != 0) return End(f);
  if (fake_depth == 0) return End(kInvalidContext);
  CUcontext top = fake_stack[--fake_depth];
  if (ctx != NULL) *ctx = top;
  FakeLog("cuCtxPopCurrent -> ctx%d", ContextDevice(top));
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  const int f = Begin("cuEventCreate");
  if (f != 0) return End(f);
  if (fake_depth == 0) {
    FakeLog("cuEventCreate flags=%u -> CUDA_ERROR_INVALID_CONTEXT (no current context)", flags);
    return End(kInvalidContext);
  }
  const int id = FakeNewEvent();
  if (id < 0) return End(kOutOfMemory);
  *event = FakeEventHandle(id);
  FakeLog("cuEventCreate flags=%u -> ev%d", flags, id);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  const int f = Begin("cuEventRecord");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0 || fake_depth == 0) return End(id < 0 ? kInvalidHandle : kInvalidContext);
  FakeLog("cuEventRecord ev%d stream=0x%llx", id, (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  const int f = Begin("cuStreamWaitEvent");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0 || fake_depth == 0 || flags != 0) {
    return End(id < 0 ? kInvalidHandle : fake_depth == 0 ? kInvalidContext : kInvalidValue);
  }
  FakeLog("cuStreamWaitEvent stream=0x%llx ev%d", (unsigned long long)(uintptr_t)stream, id);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  const int f = Begin("cuEventDestroy");
  if (f != 0) return End(f);
  const int id = FakeEventId(event);
  if (id < 0) return End(kInvalidHandle);
  FakeDestroyEvent(id);
  FakeLog("cuEventDestroy ev%d", id);
  return End(kSuccess);
}

/* Memory and copies: like the real driver, each needs a current context. */
FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* pointer, size_t bytes) {
  const int f = Begin("cuMemAlloc");
  if (f != 0) return End(f);
  if (fake_depth == 0) return End(kInvalidContext);
  void* p = FakeAllocate(bytes);
  if (p == NULL) return End(kOutOfMemory);
  *pointer = (CUdeviceptr)(uintptr_t)p;
  char where[32];
  FakeLog("cuMemAlloc bytes=%zu -> %s", bytes, FakeWhere(p, where, sizeof where));
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr pointer) {
  const int f = Begin("cuMemFree");
  if (f != 0) return End(f);
  if (fake_depth == 0) return End(kInvalidContext);
  const void* p = (const void*)(uintptr_t)pointer;
  char where[32];
  if (FakeFree(p) != 0) {
    FakeLog("cuMemFree %s -> CUDA_ERROR_INVALID_VALUE (not allocated)",
            FakeWhere(p, where, sizeof where));
    return End(kInvalidValue);
  }
  FakeLog("cuMemFree %s", FakeWhere(p, where, sizeof where));
  return End(kSuccess);
}

/* One copy: the device side(s) must lie inside the fake range. */
static CUresult Copy(const char* call, void* to, int to_device, const void* from, int from_device,
                     size_t bytes, CUstream stream) {
  const int f = Begin(call);
  if (f != 0) return End(f);
  if (fake_depth == 0) return End(kInvalidContext);
  if ((to_device && !FakeDeviceRange(to, bytes)) ||
      (from_device && !FakeDeviceRange(from, bytes))) {
    FakeLog("%s -> CUDA_ERROR_INVALID_VALUE (outside device memory)", call);
    return End(kInvalidValue);
  }
  memmove(to, from, bytes);
  char a[32], b[32];
  FakeLog("%s %s <- %s bytes=%zu stream=0x%llx", call, FakeWhere(to, a, sizeof a),
          FakeWhere(from, b, sizeof b), bytes, (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

FAKE_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void* from, size_t bytes,
                                          CUstream stream) {
  return Copy("cuMemcpyHtoDAsync", (void*)(uintptr_t)to, 1, from, 0, bytes, stream);
}
FAKE_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes,
                                          CUstream stream) {
  return Copy("cuMemcpyDtoHAsync", to, 0, (const void*)(uintptr_t)from, 1, bytes, stream);
}
FAKE_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                                          CUstream stream) {
  return Copy("cuMemcpyDtoDAsync", (void*)(uintptr_t)to, 1, (const void*)(uintptr_t)from, 1, bytes,
              stream);
}

FAKE_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  const int f = Begin("cuStreamSynchronize");
  if (f != 0) return End(f);
  if (fake_depth == 0) return End(kInvalidContext);
  FakeLog("cuStreamSynchronize stream=0x%llx", (unsigned long long)(uintptr_t)stream);
  return End(kSuccess);
}

static const struct {
  const char* name;
  void (*entry)(void); /* cast back to its own type by the caller, as dlsym's are */
} kEntries[] = {
    {"cuInit", (void (*)(void))cuInit},
    {"cuDriverGetVersion", (void (*)(void))cuDriverGetVersion},
    {"cuDeviceGetCount", (void (*)(void))cuDeviceGetCount},
    {"cuGetErrorName", (void (*)(void))cuGetErrorName},
    {"cuPointerGetAttributes", (void (*)(void))cuPointerGetAttributes},
    {"cuDeviceGet", (void (*)(void))cuDeviceGet},
    {"cuDevicePrimaryCtxRetain", (void (*)(void))cuDevicePrimaryCtxRetain},
    {"cuDevicePrimaryCtxRelease", (void (*)(void))cuDevicePrimaryCtxRelease_v2},
    {"cuCtxPushCurrent", (void (*)(void))cuCtxPushCurrent_v2},
    {"cuCtxPopCurrent", (void (*)(void))cuCtxPopCurrent_v2},
    {"cuEventCreate", (void (*)(void))cuEventCreate},
    {"cuEventRecord", (void (*)(void))cuEventRecord},
    {"cuStreamWaitEvent", (void (*)(void))cuStreamWaitEvent},
    {"cuEventDestroy", (void (*)(void))cuEventDestroy_v2},
    {"cuMemAlloc", (void (*)(void))cuMemAlloc_v2},
    {"cuMemFree", (void (*)(void))cuMemFree_v2},
    {"cuMemcpyHtoDAsync", (void (*)(void))cuMemcpyHtoDAsync_v2},
    {"cuMemcpyDtoHAsync", (void (*)(void))cuMemcpyDtoHAsync_v2},
    {"cuMemcpyDtoDAsync", (void (*)(void))cuMemcpyDtoDAsync_v2},
    {"cuStreamSynchronize", (void (*)(void))cuStreamSynchronize},
};

/* Names the test hid with fake_driver_fail("cuGetProcAddress:<name>", status). */
static CUresult Lookup(const char* symbol, void** fn, int* found) {
  char hidden[96];
  snprintf(hidden, sizeof hidden, "cuGetProcAddress:%s", symbol);
  FakeLock();
  const int f = FakeTakeFailure(hidden);
  FakeUnlock();
  *fn = NULL;
  *found = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
  if (f != 0) return f;
  for (size_t i = 0; i < sizeof kEntries / sizeof kEntries[0]; ++i) {
    if (strcmp(kEntries[i].name, symbol) == 0) {
      memcpy(fn, &kEntries[i].entry, sizeof(void*)); /* a function address as void* */
      *found = 0;
      return kSuccess;
    }
  }
  return kNotFound;
}

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** fn, int version,
                                         unsigned long long flags, int* status) {
  (void)version;
  (void)flags;
  int found = 0;
  const CUresult r = Lookup(symbol, fn, &found);
  if (status != NULL) *status = found;
  return r;
}

FAKE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** fn, int version,
                                      unsigned long long flags) {
  (void)version;
  (void)flags;
  int found = 0;
  return Lookup(symbol, fn, &found);
}

/* The test API (fake_driver.h). */
FAKE_DEFINE_TEST_API(memset(fake_retained, 0, sizeof fake_retained); fake_depth = 0)

FAKE_EXPORT int fake_driver_context_depth(void) { return fake_depth; }

FAKE_EXPORT int fake_driver_retained_contexts(void) {
  FakeLock();
  int n = 0;
  for (int i = 0; i < FAKE_DEVICES; ++i) n += fake_retained[i];
  FakeUnlock();
  return n;
}
