/* The C API, from C: every function, its error paths, and a count of every release and
 * deleter call. Each case is named after its rule in spec/c-api.md; `test_c_api C-7` runs
 * one case. The last line is "N passed, M failed"; the exit status is 1 on any failure. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlbridge/dlbridge_c.h"
#include "platform.h"

static int g_passed = 0;
static int g_failed = 0;
static const char* g_case = "";

static void Check(int ok, const char* what, int line) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    printf("FAILED %s (line %d): %s\n  last error: %s\n", g_case, line, what, dlb_last_error());
  }
}
#define CHECK(cond) Check((cond) ? 1 : 0, #cond, __LINE__)
#define CHECK_STATUS(call, status) Check((call) == (status), #call " == " #status, __LINE__)

/* Counts each release by its context, so a test sees which hold ran and how often. */
typedef struct Counter {
  int calls;
} Counter;
static void CountRelease(void* context) { ++((Counter*)context)->calls; }

static int Contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

static int64_t Address(const void* p) { return (int64_t)(intptr_t)p; }

static const DLDataType kFloat32 = {kDLFloat, 32, 1};
static const DLDevice kNoDevice = {(DLDeviceType)0, 0};

/* A producer's tensors built field by field; the deleter counts its calls. `managed` is the
 * first member, so the deleter finds its HandBuilt from the pointer it is given. */
typedef struct HandBuiltV {
  DLManagedTensorVersioned managed;
  int64_t shape[4];
  int64_t strides[4];
  int deletes;
} HandBuiltV;
static void DeleteV(DLManagedTensorVersioned* self) { ++((HandBuiltV*)self)->deletes; }

typedef struct HandBuiltL {
  DLManagedTensor managed;
  int64_t shape[4];
  int64_t strides[4];
  int deletes;
} HandBuiltL;
static void DeleteL(DLManagedTensor* self) { ++((HandBuiltL*)self)->deletes; }

static float g_data[64];

/* A float32 2x3 host tensor over g_data, DLPack 1.<minor>, strides {3, 1}. */
static void MakeV(HandBuiltV* h, uint32_t minor) {
  memset(h, 0, sizeof *h);
  h->managed.version.major = 1;
  h->managed.version.minor = minor;
  h->managed.deleter = DeleteV;
  h->shape[0] = 2;
  h->shape[1] = 3;
  h->strides[0] = 3;
  h->strides[1] = 1;
  h->managed.dl_tensor.data = g_data;
  h->managed.dl_tensor.device.device_type = kDLCPU;
  h->managed.dl_tensor.ndim = 2;
  h->managed.dl_tensor.dtype = kFloat32;
  h->managed.dl_tensor.shape = h->shape;
  h->managed.dl_tensor.strides = h->strides;
}

static void MakeL(HandBuiltL* h) {
  memset(h, 0, sizeof *h);
  h->managed.deleter = DeleteL;
  h->shape[0] = 4;
  h->managed.dl_tensor.data = g_data;
  h->managed.dl_tensor.device.device_type = kDLCPU;
  h->managed.dl_tensor.ndim = 1;
  h->managed.dl_tensor.dtype = kFloat32;
  h->managed.dl_tensor.shape = h->shape;
  h->managed.dl_tensor.strides = NULL; /* legacy: NULL means C-contiguous */
}

/* A host descriptor over g_data holding CountRelease(counter). */
static dlb_descriptor* MakeDescriptor(Counter* counter) {
  dlb_descriptor* d = NULL;
  CHECK_STATUS(dlb_descriptor_create(&d), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set(d, Address(g_data), (int64_t)sizeof g_data, "host", "data"),
               DLB_OK);
  if (counter != NULL) CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, counter), DLB_OK);
  return d;
}

/* C-1: status codes are 0 and the negated dlbridge::ErrorCode values; each has a name. */
static void TestStatusCodes(void) {
  static const struct {
    int status;
    int code;
    const char* name;
  } kCodes[] = {
      {DLB_OK, 0, "DLB_OK"},
      {DLB_ERR_INVALID_ARGUMENT, 1, "DLB_ERR_INVALID_ARGUMENT"},
      {DLB_ERR_INVALID_MEMORY_SPACE, 2, "DLB_ERR_INVALID_MEMORY_SPACE"},
      {DLB_ERR_INVALID_DESCRIPTOR, 3, "DLB_ERR_INVALID_DESCRIPTOR"},
      {DLB_ERR_UNSUPPORTED_VERSION, 4, "DLB_ERR_UNSUPPORTED_VERSION"},
      {DLB_ERR_INVALID_SHAPE, 5, "DLB_ERR_INVALID_SHAPE"},
      {DLB_ERR_INVALID_STRIDES, 6, "DLB_ERR_INVALID_STRIDES"},
      {DLB_ERR_INVALID_DTYPE, 7, "DLB_ERR_INVALID_DTYPE"},
      {DLB_ERR_INVALID_FLAGS, 8, "DLB_ERR_INVALID_FLAGS"},
      {DLB_ERR_UNSUPPORTED_DEVICE, 9, "DLB_ERR_UNSUPPORTED_DEVICE"},
      {DLB_ERR_DEVICE_MISMATCH, 10, "DLB_ERR_DEVICE_MISMATCH"},
      {DLB_ERR_MISSING_DEVICE_ID, 11, "DLB_ERR_MISSING_DEVICE_ID"},
      {DLB_ERR_MISSING_CONTEXT, 12, "DLB_ERR_MISSING_CONTEXT"},
      {DLB_ERR_NULL_DATA, 13, "DLB_ERR_NULL_DATA"},
      {DLB_ERR_OUT_OF_BOUNDS, 14, "DLB_ERR_OUT_OF_BOUNDS"},
      {DLB_ERR_OVERFLOW, 15, "DLB_ERR_OVERFLOW"},
      {DLB_ERR_READ_ONLY, 16, "DLB_ERR_READ_ONLY"},
      {DLB_ERR_OUT_OF_MEMORY, 17, "DLB_ERR_OUT_OF_MEMORY"},
      {DLB_ERR_RUNTIME_UNAVAILABLE, 18, "DLB_ERR_RUNTIME_UNAVAILABLE"},
      {DLB_ERR_DOUBLE_RELEASE, 19, "DLB_ERR_DOUBLE_RELEASE"},
      {DLB_ERR_STUB_LIBRARY, 20, "DLB_ERR_STUB_LIBRARY"},
      {DLB_ERR_NO_DEVICE, 21, "DLB_ERR_NO_DEVICE"},
      {DLB_ERR_RUNTIME_NOT_INITIALIZED, 22, "DLB_ERR_RUNTIME_NOT_INITIALIZED"},
      {DLB_ERR_UNKNOWN_POINTER, 23, "DLB_ERR_UNKNOWN_POINTER"},
      {DLB_ERR_NO_HOLD, 24, "DLB_ERR_NO_HOLD"},
      {DLB_ERR_UNSUPPORTED_DTYPE, 25, "DLB_ERR_UNSUPPORTED_DTYPE"},
  };
  size_t i;
  for (i = 0; i < sizeof kCodes / sizeof kCodes[0]; ++i) {
    CHECK(kCodes[i].status == -kCodes[i].code);
    CHECK(strcmp(dlb_status_name(kCodes[i].status), kCodes[i].name) == 0);
  }
  CHECK(strcmp(dlb_status_name(DLB_ERR_INTERNAL), "DLB_ERR_INTERNAL") == 0);
  CHECK(strcmp(dlb_status_name(1), "unknown") == 0);
  CHECK(strcmp(dlb_status_name(-999), "unknown") == 0);
  CHECK(strcmp(dlb_status_name(-2000), "unknown") == 0);
}

/* C-2: a failing call records a message naming the function and the field; success keeps it. */
static void TestLastError(void) {
  dlb_descriptor* d = MakeDescriptor(NULL);
  CHECK_STATUS(dlb_descriptor_set_size(d, -5), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK(Contains(dlb_last_error(), "sizeInBytes is -5"));
  CHECK_STATUS(dlb_descriptor_set_size(d, 8), DLB_OK);
  CHECK(Contains(dlb_last_error(), "sizeInBytes is -5")); /* unchanged by success */
  CHECK_STATUS(dlb_descriptor_create(NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(dlb_last_error(), "dlb_descriptor_create: out is NULL") == 0);
  dlb_descriptor_destroy(d);
}

/* C-3: the message is per thread: a thread that never failed sees "", and its failure does
 * not change the main thread's message. */
typedef struct ThreadSeen {
  char before[256];
  char after[256];
} ThreadSeen;
static void FailOnAnotherThread(void* arg) {
  ThreadSeen* seen = (ThreadSeen*)arg;
  snprintf(seen->before, sizeof seen->before, "%s", dlb_last_error());
  (void)dlb_descriptor_set_memory_space(NULL, "host");
  snprintf(seen->after, sizeof seen->after, "%s", dlb_last_error());
}
static void TestThreadLocalError(void) {
  ThreadSeen seen;
  memset(&seen, 0, sizeof seen);
  CHECK_STATUS(dlb_descriptor_set_pointer(NULL, 1), DLB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(dlb_last_error(), "dlb_descriptor_set_pointer: descriptor is NULL") == 0);
  CHECK(DlbTestRunOnThread(FailOnAnotherThread, &seen) == 0);
  CHECK(strcmp(seen.before, "") == 0);
  CHECK(strcmp(seen.after, "dlb_descriptor_set_memory_space: descriptor is NULL") == 0);
  CHECK(strcmp(dlb_last_error(), "dlb_descriptor_set_pointer: descriptor is NULL") == 0);
}

/* C-4: create gives host, role "data", pointer 0, size 0, no hold; destroy(NULL) is a no-op. */
static void TestCreateDefaults(void) {
  dlb_descriptor* d = NULL;
  CHECK_STATUS(dlb_descriptor_create(&d), DLB_OK);
  CHECK(d != NULL);
  CHECK(dlb_descriptor_get_pointer(d) == 0);
  CHECK(dlb_descriptor_get_size(d) == 0);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "host") == 0);
  CHECK(strcmp(dlb_descriptor_get_role(d), "data") == 0);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  CHECK(dlb_descriptor_get_release(d) == NULL);
  CHECK(dlb_descriptor_get_release_context(d) == NULL);
  dlb_descriptor_destroy(d);
  dlb_descriptor_destroy(NULL);
}

/* C-5: set and the setters validate like the C++ ones; a failure changes nothing. */
static void TestSetters(void) {
  dlb_descriptor* d = NULL;
  Counter counter = {0};
  CHECK_STATUS(dlb_descriptor_create(&d), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, &counter), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set(d, 4096, 100, "cuda", "weights"), DLB_OK);
  CHECK(dlb_descriptor_get_pointer(d) == 4096 && dlb_descriptor_get_size(d) == 100);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "cuda") == 0);
  CHECK(strcmp(dlb_descriptor_get_role(d), "weights") == 0);

  CHECK_STATUS(dlb_descriptor_set(d, 8192, 1, "metal", "x"), DLB_ERR_INVALID_MEMORY_SPACE);
  CHECK(Contains(dlb_last_error(), "\"metal\" does not exist"));
  CHECK_STATUS(dlb_descriptor_set(d, 8192, -1, "host", "x"), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK_STATUS(dlb_descriptor_set(d, 0, 1, "host", "x"), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK_STATUS(dlb_descriptor_set(d, 8192, 1, "host", NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_descriptor_set(d, 8192, 1, NULL, "x"), DLB_ERR_INVALID_MEMORY_SPACE);
  CHECK_STATUS(dlb_descriptor_set(NULL, 8192, 1, "host", "x"), DLB_ERR_INVALID_ARGUMENT);
  CHECK(dlb_descriptor_get_pointer(d) == 4096 && dlb_descriptor_get_size(d) == 100);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "cuda") == 0);
  CHECK(strcmp(dlb_descriptor_get_role(d), "weights") == 0);

  CHECK_STATUS(dlb_descriptor_set_pointer(d, 0), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK_STATUS(dlb_descriptor_set_pointer(d, 1024), DLB_OK);
  CHECK(dlb_descriptor_get_pointer(d) == 1024);
  CHECK_STATUS(dlb_descriptor_set_size(d, -1), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK_STATUS(dlb_descriptor_set_size(NULL, 1), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_descriptor_set_size(d, 0), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set_pointer(d, 0), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set_size(d, 1), DLB_ERR_INVALID_DESCRIPTOR);
  CHECK(dlb_descriptor_get_size(d) == 0);
  CHECK_STATUS(dlb_descriptor_set_memory_space(d, "level_zero"), DLB_OK);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "level_zero") == 0);
  CHECK_STATUS(dlb_descriptor_set_memory_space(d, "opencl"), DLB_ERR_INVALID_MEMORY_SPACE);
  CHECK(Contains(dlb_last_error(), "\"opencl\" is unknown"));
  CHECK_STATUS(dlb_descriptor_set_memory_space(d, NULL), DLB_ERR_INVALID_MEMORY_SPACE);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "level_zero") == 0);
  CHECK_STATUS(dlb_descriptor_set_role(d, "mask"), DLB_OK);
  CHECK(strcmp(dlb_descriptor_get_role(d), "mask") == 0);
  CHECK_STATUS(dlb_descriptor_set_role(d, NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_descriptor_set_role(NULL, "x"), DLB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(dlb_descriptor_get_role(d), "mask") == 0);

  CHECK(counter.calls == 0); /* no setter touches the hold */
  CHECK(dlb_descriptor_has_ownership(d) == 1);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 1);
}

/* C-6: getters on NULL give 0 / NULL. */
static void TestNullGetters(void) {
  CHECK(dlb_descriptor_get_pointer(NULL) == 0);
  CHECK(dlb_descriptor_get_size(NULL) == 0);
  CHECK(dlb_descriptor_get_memory_space(NULL) == NULL);
  CHECK(dlb_descriptor_get_role(NULL) == NULL);
  CHECK(dlb_descriptor_has_ownership(NULL) == 0);
  CHECK(dlb_descriptor_get_release(NULL) == NULL);
  CHECK(dlb_descriptor_get_release_context(NULL) == NULL);
}

/* C-7: a release runs exactly once: at destroy, or when a new hold replaces it, or when NULL
 * clears it; set_release on a NULL descriptor calls nothing. */
static void TestSetRelease(void) {
  Counter first = {0}, second = {0}, third = {0};
  dlb_descriptor* d = MakeDescriptor(&first);
  CHECK(dlb_descriptor_has_ownership(d) == 1);
  CHECK(dlb_descriptor_get_release(d) == CountRelease);
  CHECK(dlb_descriptor_get_release_context(d) == &first);
  CHECK(first.calls == 0);
  CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, &second), DLB_OK);
  CHECK(first.calls == 1 && second.calls == 0);
  CHECK_STATUS(dlb_descriptor_set_release(d, NULL, &third), DLB_OK);
  CHECK(second.calls == 1 && third.calls == 0);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  CHECK(dlb_descriptor_get_release_context(d) == NULL);
  CHECK_STATUS(dlb_descriptor_set_release(NULL, CountRelease, &third), DLB_ERR_INVALID_ARGUMENT);
  CHECK(third.calls == 0);
  CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, &third), DLB_OK);
  dlb_descriptor_destroy(d);
  CHECK(first.calls == 1 && second.calls == 1 && third.calls == 1);
}

/* C-8: set_release_address is set_release with integers. */
static void TestSetReleaseAddress(void) {
  Counter counter = {0};
  dlb_release_fn fn = CountRelease;
  int64_t fnAddress;
  dlb_descriptor* d = MakeDescriptor(NULL);
  fnAddress = (int64_t)(intptr_t)fn; /* what an FFI holds */
  CHECK_STATUS(dlb_descriptor_set_release_address(d, fnAddress, Address(&counter)), DLB_OK);
  CHECK(dlb_descriptor_get_release(d) == CountRelease);
  CHECK(dlb_descriptor_get_release_context(d) == &counter);
  CHECK_STATUS(dlb_descriptor_set_release_address(NULL, fnAddress, Address(&counter)),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK(counter.calls == 0);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 1);
}

/* C-9: take_release hands over the pair and disarms the descriptor. */
static void TestTakeRelease(void) {
  Counter counter = {0};
  dlb_release_fn fn = NULL;
  void* ctx = NULL;
  dlb_descriptor* d = MakeDescriptor(&counter);
  CHECK_STATUS(dlb_descriptor_take_release(d, NULL, &ctx), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_descriptor_take_release(d, &fn, NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK(fn == NULL);
  CHECK(dlb_descriptor_has_ownership(d) == 1); /* a failed take keeps the hold */
  CHECK_STATUS(dlb_descriptor_take_release(NULL, &fn, &ctx), DLB_ERR_INVALID_ARGUMENT);
  CHECK(fn == NULL && ctx == NULL);
  CHECK_STATUS(dlb_descriptor_take_release(d, &fn, &ctx), DLB_OK);
  CHECK(fn == CountRelease && ctx == &counter);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  CHECK_STATUS(dlb_descriptor_take_release(d, &fn, &ctx), DLB_OK); /* nothing held now */
  CHECK(fn == NULL && ctx == NULL);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 0);
  CountRelease(&counter); /* the duty taken over */
  CHECK(counter.calls == 1);
}

/* C-10: a versioned export is zero-copy, moves the hold, and its deleter releases once. */
static void TestExportVersioned(void) {
  Counter counter = {0};
  const int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned* out = NULL;
  dlb_descriptor* d = MakeDescriptor(&counter);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 2, shape, NULL, 8, kNoDevice, 0, NULL, &out),
               DLB_OK);
  CHECK(out != NULL);
  if (out == NULL) return;
  CHECK(out->version.major == 1 && out->version.minor == DLPACK_MINOR_VERSION);
  CHECK(out->flags == 0);
  CHECK(out->manager_ctx == &counter);
  /* Element zero in data, byte_offset 0 (EXP-17): what PyTorch, ignoring it, reads right. */
  CHECK(out->dl_tensor.data == (void*)((char*)g_data + 8) && out->dl_tensor.byte_offset == 0);
  CHECK(out->dl_tensor.device.device_type == kDLCPU && out->dl_tensor.device.device_id == 0);
  CHECK(out->dl_tensor.ndim == 2 && out->dl_tensor.dtype.code == kDLFloat);
  CHECK(out->dl_tensor.shape[0] == 2 && out->dl_tensor.shape[1] == 3);
  CHECK(out->dl_tensor.strides[0] == 3 && out->dl_tensor.strides[1] == 1);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  CHECK(dlb_descriptor_get_pointer(d) == Address(g_data)); /* the description stays */
  CHECK(strcmp(dlb_descriptor_get_role(d), "data") == 0);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 0);
  out->deleter(out);
  CHECK(counter.calls == 1);
}

/* C-11: export options: read_only, device_id, Level Zero context and device. */
static void TestExportOptions(void) {
  Counter counter = {0};
  const int64_t shape[1] = {4};
  DLManagedTensorVersioned* out = NULL;
  dlb_export_options options = DLB_EXPORT_OPTIONS_INIT;
  dlb_descriptor* d = MakeDescriptor(&counter);
  int ze_context = 0, ze_device = 0;
  options.read_only = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && (out->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  if (out) out->deleter(out);
  CHECK(counter.calls == 1);
  dlb_descriptor_destroy(d);

  /* A GPU space needs an ordinal: missing, then given through options. */
  d = MakeDescriptor(&counter);
  CHECK_STATUS(dlb_descriptor_set_memory_space(d, "cuda"), DLB_OK);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_MISSING_DEVICE_ID);
  CHECK(out == NULL && dlb_descriptor_has_ownership(d) == 1);
  options = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  options.device_id = 3;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && out->dl_tensor.device.device_type == kDLCUDA &&
        out->dl_tensor.device.device_id == 3);
  if (out) out->deleter(out);
  CHECK(counter.calls == 2);

  /* Level Zero needs both handles. */
  CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, &counter), DLB_OK);
  CHECK_STATUS(dlb_descriptor_set_memory_space(d, "level_zero"), DLB_OK);
  options = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  options.device_id = 0;
  options.level_zero_context = &ze_context;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_ERR_MISSING_CONTEXT);
  options.level_zero_device = &ze_device;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && out->dl_tensor.device.device_type == kDLOneAPI);
  if (out) out->deleter(out);
  CHECK(counter.calls == 3);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 3);

  /* keep_byte_offset: the pointer and the byte offset exactly as given. */
  d = MakeDescriptor(&counter);
  options = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  options.keep_byte_offset = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 8, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && out->dl_tensor.data == (void*)g_data && out->dl_tensor.byte_offset == 8);
  if (out) out->deleter(out);
  CHECK(counter.calls == 4);

  /* A descriptor that holds nothing: DLB_ERR_NO_HOLD naming the opt-in, then allow_unowned. */
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  options = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_ERR_NO_HOLD);
  CHECK(out == NULL && Contains(dlb_last_error(), "ExportOptions::allow_unowned"));
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_NO_HOLD);
  options.allow_unowned = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && out->manager_ctx == NULL);
  if (out) out->deleter(out);
  CHECK(counter.calls == 4);
  dlb_descriptor_destroy(d);
}

/* C-12: options structs grow: a short struct_size fails, unknown trailing bytes must be 0. */
static void TestOptionsStructSize(void) {
  Counter counter = {0};
  const int64_t shape[1] = {4};
  DLManagedTensorVersioned* out = NULL;
  struct {
    dlb_export_options known;
    uint64_t newer_field;
  } grown;
  dlb_descriptor* d = MakeDescriptor(&counter);
  dlb_export_options options = DLB_EXPORT_OPTIONS_INIT;
  options.struct_size = 4;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &options, &out),
      DLB_ERR_INVALID_ARGUMENT);
  CHECK(Contains(dlb_last_error(), "struct_size is 4"));
  memset(&grown, 0, sizeof grown);
  grown.known = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  grown.known.struct_size = (uint32_t)sizeof grown;
  grown.newer_field = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &grown.known, &out),
      DLB_ERR_INVALID_ARGUMENT);
  CHECK(counter.calls == 0 && dlb_descriptor_has_ownership(d) == 1);
  grown.newer_field = 0; /* zero = "not asked for": a newer caller's defaults */
  grown.known.read_only = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 0, kNoDevice, 0, &grown.known, &out),
      DLB_OK);
  CHECK(out != NULL && (out->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  if (out) out->deleter(out);
  CHECK(counter.calls == 1);
  /* A version-1 caller (32 bytes, before keep_byte_offset) gets keep_byte_offset's default:
   * the bytes past its struct_size are not read. */
  CHECK_STATUS(dlb_descriptor_set_release(d, CountRelease, &counter), DLB_OK);
  options = (dlb_export_options)DLB_EXPORT_OPTIONS_INIT;
  options.struct_size = 32;
  options.keep_byte_offset = 1;
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 1, shape, NULL, 4, kNoDevice, 0, &options, &out),
      DLB_OK);
  CHECK(out != NULL && out->dl_tensor.byte_offset == 0 &&
        out->dl_tensor.data == (void*)((char*)g_data + 4));
  if (out) out->deleter(out);
  CHECK(counter.calls == 2);
  dlb_descriptor_destroy(d);
}

/* C-13: a failed export leaves the hold in the descriptor and *out NULL. */
static void TestExportFailureKeepsHold(void) {
  Counter counter = {0};
  const int64_t tooBig[1] = {1000};
  const int64_t shape[2] = {2, 3};
  const int64_t badStrides[2] = {3, 1};
  const DLDataType badDtype = {kDLFloat, 12, 1};
  DLManagedTensorVersioned* out = (DLManagedTensorVersioned*)&counter; /* must be reset */
  DLManagedTensor* legacy = (DLManagedTensor*)&counter;
  dlb_descriptor* d = MakeDescriptor(&counter);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 1, tooBig, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_OUT_OF_BOUNDS);
  CHECK(out == NULL);
  CHECK(Contains(dlb_last_error(), "ToDLPackVersioned: the layout reaches bytes"));
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, badDtype, 2, shape, badStrides, 0, kNoDevice, 0, NULL, &out),
      DLB_ERR_INVALID_DTYPE);
  {
    const DLDataType unknownCode = {99, 8, 1}; /* well-formed, but no code this build knows */
    CHECK_STATUS(
        dlb_to_dlpack_versioned(d, unknownCode, 2, shape, NULL, 0, kNoDevice, 0, NULL, &out),
        DLB_ERR_UNSUPPORTED_DTYPE);
    CHECK(out == NULL);
    CHECK(Contains(dlb_last_error(), "dtype.code 99 is unknown"));
  }
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 2, NULL, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_INVALID_SHAPE);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 65, shape, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_INVALID_SHAPE);
  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 1u << 20, NULL, &out),
      DLB_ERR_INVALID_FLAGS);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, NULL),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_to_dlpack_versioned(NULL, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_to_dlpack(d, kFloat32, 1, tooBig, NULL, 0, kNoDevice, 0, NULL, &legacy),
               DLB_ERR_OUT_OF_BOUNDS);
  CHECK(legacy == NULL);
  CHECK_STATUS(dlb_to_dlpack(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, NULL),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_to_dlpack(NULL, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, &legacy),
               DLB_ERR_INVALID_ARGUMENT);
  /* An address import would refuse (at 2^63: EXP-18) is refused by export, both forms. */
  CHECK_STATUS(dlb_descriptor_set(d, INT64_MIN, 64, "host", "data"), DLB_OK);
  CHECK_STATUS(dlb_to_dlpack_versioned(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, &out),
               DLB_ERR_OVERFLOW);
  CHECK(Contains(dlb_last_error(), "0x8000000000000000 with byte_offset 0"));
  CHECK_STATUS(dlb_to_dlpack(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, &legacy),
               DLB_ERR_OVERFLOW);
  CHECK(out == NULL && legacy == NULL);
  CHECK_STATUS(dlb_descriptor_set(d, Address(g_data), (int64_t)sizeof g_data, "host", "data"),
               DLB_OK);
  CHECK(counter.calls == 0);
  CHECK(dlb_descriptor_has_ownership(d) == 1);
  CHECK(dlb_descriptor_get_release_context(d) == &counter);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 1);
}

/* C-14: legacy export: same ownership; read-only cannot be said (DLB_ERR_READ_ONLY). */
static void TestExportLegacy(void) {
  Counter counter = {0};
  const int64_t shape[1] = {4};
  const int64_t strides[1] = {2};
  DLManagedTensor* out = NULL;
  dlb_export_options options = DLB_EXPORT_OPTIONS_INIT;
  dlb_descriptor* d = MakeDescriptor(&counter);
  options.read_only = 1;
  CHECK_STATUS(dlb_to_dlpack(d, kFloat32, 1, shape, strides, 0, kNoDevice, 0, &options, &out),
               DLB_ERR_READ_ONLY);
  CHECK(out == NULL && dlb_descriptor_has_ownership(d) == 1);
  CHECK_STATUS(dlb_to_dlpack(d, kFloat32, 1, shape, strides, 0, kNoDevice, 0, NULL, &out), DLB_OK);
  CHECK(out != NULL && out->manager_ctx == &counter && out->dl_tensor.strides[0] == 2);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  dlb_descriptor_destroy(d);
  CHECK(counter.calls == 0);
  if (out) out->deleter(out);
  CHECK(counter.calls == 1);
}

/* C-15: a versioned import gives a descriptor spanning the tensor and its layout; destroying
 * the descriptor calls the deleter exactly once. */
static void TestImportVersioned(void) {
  HandBuiltV h;
  dlb_descriptor* d = NULL;
  dlb_layout layout;
  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  h.managed.dl_tensor.byte_offset = 4;
  memset(&layout, 0xAB, sizeof layout);
  layout.struct_size = sizeof layout;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, &layout), DLB_OK);
  CHECK(d != NULL);
  if (d == NULL) return;
  CHECK(dlb_descriptor_get_pointer(d) == Address(g_data) + 4);
  CHECK(dlb_descriptor_get_size(d) == 6 * 4);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "host") == 0);
  CHECK(dlb_descriptor_has_ownership(d) == 1);
  CHECK(dlb_descriptor_get_release_context(d) == &h.managed);
  CHECK(layout.struct_size == sizeof layout && layout.reserved == 0);
  CHECK(layout.ndim == 2 && layout.dtype.code == kDLFloat && layout.dtype.bits == 32);
  CHECK(layout.byte_offset == 0);
  CHECK(layout.shape[0] == 2 && layout.shape[1] == 3 && layout.shape[2] == 0);
  CHECK(layout.strides[0] == 3 && layout.strides[1] == 1 && layout.strides[63] == 0);
  CHECK(layout.device.device_type == kDLCPU && layout.device.device_id == 0);
  CHECK(layout.flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(h.deletes == 0);
  dlb_descriptor_destroy(d);
  CHECK(h.deletes == 1);

  /* out_layout is optional. */
  MakeV(&h, 0);
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, NULL), DLB_OK);
  dlb_descriptor_destroy(d);
  CHECK(h.deletes == 1);
}

/* C-16: import always consumes: every failure has run the deleter once and *out is NULL. */
static void TestImportFailureConsumes(void) {
  HandBuiltV h;
  HandBuiltL l;
  dlb_descriptor* d = NULL;
  dlb_layout layout;
  dlb_import_options options = DLB_IMPORT_OPTIONS_INIT;
  layout.struct_size = sizeof layout;

  MakeV(&h, 0);
  h.managed.version.major = 2;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, &layout),
               DLB_ERR_UNSUPPORTED_VERSION);
  CHECK(h.deletes == 1 && d == NULL);

  MakeV(&h, DLPACK_MINOR_VERSION);
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, NULL, &layout),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK(h.deletes == 1);
  CHECK(Contains(dlb_last_error(), "out_descriptor is NULL"));

  MakeV(&h, DLPACK_MINOR_VERSION);
  layout.struct_size = 8;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, &layout), DLB_ERR_INVALID_ARGUMENT);
  CHECK(h.deletes == 1 && d == NULL);
  layout.struct_size = sizeof layout;

  MakeV(&h, DLPACK_MINOR_VERSION);
  options.struct_size = 2;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout),
               DLB_ERR_INVALID_ARGUMENT);
  CHECK(h.deletes == 1 && d == NULL);
  options = (dlb_import_options)DLB_IMPORT_OPTIONS_INIT;

  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.dl_tensor.data = NULL;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, &layout), DLB_ERR_NULL_DATA);
  CHECK(h.deletes == 1 && d == NULL);

  MakeL(&l);
  l.managed.dl_tensor.ndim = 65;
  CHECK_STATUS(dlb_from_dlpack(&l.managed, NULL, &d, &layout), DLB_ERR_INVALID_SHAPE);
  CHECK(l.deletes == 1 && d == NULL);

  MakeL(&l);
  CHECK_STATUS(dlb_from_dlpack(&l.managed, NULL, NULL, NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK(l.deletes == 1);

  CHECK_STATUS(dlb_from_dlpack_versioned(NULL, NULL, &d, &layout), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_from_dlpack(NULL, NULL, &d, &layout), DLB_ERR_INVALID_ARGUMENT);
  CHECK(d == NULL);

  /* A NULL deleter: nothing to call, on failure or success (no hold). */
  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.deleter = NULL;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, NULL, NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &d, NULL), DLB_OK);
  CHECK(dlb_descriptor_has_ownership(d) == 0);
  dlb_descriptor_destroy(d);
  CHECK(h.deletes == 0);
}

/* C-17: import options: require_writable, allow_null_strides, legacy_read_only, Level Zero. */
static void TestImportOptions(void) {
  HandBuiltV h;
  HandBuiltL l;
  dlb_descriptor* d = NULL;
  dlb_layout layout;
  dlb_import_options options = DLB_IMPORT_OPTIONS_INIT;
  int ze_context = 0;
  layout.struct_size = sizeof layout;

  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  options.require_writable = 1;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout), DLB_ERR_READ_ONLY);
  CHECK(h.deletes == 1 && d == NULL);
  options = (dlb_import_options)DLB_IMPORT_OPTIONS_INIT;

  MakeV(&h, 3);
  h.managed.dl_tensor.strides = NULL;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout),
               DLB_ERR_INVALID_STRIDES);
  CHECK(h.deletes == 1);
  MakeV(&h, 3);
  h.managed.dl_tensor.strides = NULL;
  options.allow_null_strides = 1;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout), DLB_OK);
  CHECK(layout.strides[0] == 3 && layout.strides[1] == 1);
  dlb_descriptor_destroy(d);
  CHECK(h.deletes == 1);
  options = (dlb_import_options)DLB_IMPORT_OPTIONS_INIT;

  MakeL(&l);
  options.legacy_read_only = 1;
  CHECK_STATUS(dlb_from_dlpack(&l.managed, &options, &d, &layout), DLB_OK);
  CHECK(layout.flags == DLPACK_FLAG_BITMASK_READ_ONLY);
  CHECK(layout.ndim == 1 && layout.shape[0] == 4 && layout.strides[0] == 1);
  CHECK(dlb_descriptor_get_size(d) == 16);
  dlb_descriptor_destroy(d);
  CHECK(l.deletes == 1);
  options = (dlb_import_options)DLB_IMPORT_OPTIONS_INIT;

  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.dl_tensor.device.device_type = kDLOneAPI;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout),
               DLB_ERR_MISSING_CONTEXT);
  CHECK(h.deletes == 1);
  MakeV(&h, DLPACK_MINOR_VERSION);
  h.managed.dl_tensor.device.device_type = kDLOneAPI;
  options.level_zero_context = &ze_context;
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, &options, &d, &layout), DLB_OK);
  CHECK(strcmp(dlb_descriptor_get_memory_space(d), "level_zero") == 0);
  CHECK(layout.device.device_type == kDLOneAPI);
  dlb_descriptor_destroy(d);
  CHECK(h.deletes == 1);
}

/* C-18: round trips: export -> import -> destroy releases once; an unchanged re-export of an
 * import hands back the producer's own tensor. */
static void TestRoundTrip(void) {
  Counter counter = {0};
  const int64_t shape[2] = {2, 3};
  DLManagedTensorVersioned* exported = NULL;
  DLManagedTensorVersioned* again = NULL;
  DLManagedTensor* legacyOut = NULL;
  dlb_descriptor* d = MakeDescriptor(&counter);
  dlb_descriptor* imported = NULL;
  dlb_layout layout;
  HandBuiltV h;
  HandBuiltL l;
  layout.struct_size = sizeof layout;

  CHECK_STATUS(
      dlb_to_dlpack_versioned(d, kFloat32, 2, shape, NULL, 0, kNoDevice, 0, NULL, &exported),
      DLB_OK);
  dlb_descriptor_destroy(d);
  CHECK_STATUS(dlb_from_dlpack_versioned(exported, NULL, &imported, &layout), DLB_OK);
  CHECK(dlb_descriptor_get_pointer(imported) == Address(g_data));
  CHECK(counter.calls == 0);
  dlb_descriptor_destroy(imported);
  CHECK(counter.calls == 1);

  MakeV(&h, DLPACK_MINOR_VERSION);
  CHECK_STATUS(dlb_from_dlpack_versioned(&h.managed, NULL, &imported, &layout), DLB_OK);
  CHECK_STATUS(
      dlb_to_dlpack_versioned(imported, layout.dtype, layout.ndim, layout.shape, layout.strides,
                              layout.byte_offset, layout.device, layout.flags, NULL, &again),
      DLB_OK);
  CHECK(again == &h.managed);
  dlb_descriptor_destroy(imported);
  CHECK(h.deletes == 0);
  if (again) again->deleter(again);
  CHECK(h.deletes == 1);

  MakeL(&l);
  CHECK_STATUS(dlb_from_dlpack(&l.managed, NULL, &imported, &layout), DLB_OK);
  CHECK_STATUS(dlb_to_dlpack(imported, layout.dtype, layout.ndim, layout.shape, layout.strides,
                             layout.byte_offset, layout.device, layout.flags, NULL, &legacyOut),
               DLB_OK);
  dlb_descriptor_destroy(imported);
  CHECK(l.deletes == 0);
  if (legacyOut) legacyOut->deleter(legacyOut);
  CHECK(l.deletes == 1);
}

/* A function of the fake CUDA driver (tests/fakes/fake_driver.h), or NULL; copied out of
 * the symbol's void* without a cast (ISO C has no object-to-function pointer conversion). */
static void (*FakeFunction(void* handle, const char* name))(void) {
  void (*fn)(void) = NULL;
  void* p = DlbTestSymbol(handle, name);
  if (p != NULL) memcpy(&fn, &p, sizeof fn);
  return fn;
}

/* STR-7: dlb_order_streams. Without a driver only what needs none is checked; ctest points
 * DLBRIDGE_CUDA_LIBRARY at the fake CUDA driver, whose log shows the event and the wait. */
static void TestOrderStreams(void) {
  int ordered = 7;
  const char* fake = getenv("DLBRIDGE_CUDA_LIBRARY");
  CHECK_STATUS(dlb_order_streams(kDLCUDA, 0, 0, 1, &ordered), DLB_ERR_INVALID_ARGUMENT);
  CHECK(ordered == 0);
  CHECK(Contains(dlb_last_error(), "OrderStreams: producer 0 is illegal for kDLCUDA"));
  CHECK_STATUS(dlb_order_streams(kDLROCM, 0, 0, 2, NULL), DLB_ERR_INVALID_ARGUMENT);
  CHECK(Contains(dlb_last_error(), "consumer 2 is illegal for kDLROCM"));
  ordered = 7;
  CHECK_STATUS(dlb_order_streams(kDLCUDA, 0, 0x1234, -1, &ordered), DLB_OK); /* -1: none */
  CHECK(ordered == 0);
  CHECK_STATUS(dlb_order_streams(kDLROCM, 0, 0x1234, 0x1234, &ordered), DLB_OK);
  CHECK(ordered == 0);
  CHECK_STATUS(dlb_order_streams(kDLCPU, 0, 1, 2, &ordered), DLB_OK);
  CHECK(ordered == 0);
  if (fake == NULL || fake[0] == '\0') return;

  void* handle = DlbTestOpenLibrary(fake);
  CHECK(handle != NULL);
  void (*reset)(void) = (void (*)(void))FakeFunction(handle, "fake_driver_reset");
  const char* (*log)(void) = (const char* (*)(void))FakeFunction(handle, "fake_driver_log");
  void (*fail)(const char*, int) =
      (void (*)(const char*, int))FakeFunction(handle, "fake_driver_fail");
  int (*live)(void) = (int (*)(void))FakeFunction(handle, "fake_driver_live_events");
  CHECK(reset != NULL && log != NULL && fail != NULL && live != NULL);
  if (reset == NULL || log == NULL || fail == NULL || live == NULL) return;
  reset();
  ordered = 7;
  const int status = dlb_order_streams(kDLCUDA, 1, 0x1234, 1, &ordered);
  if (status == DLB_ERR_RUNTIME_UNAVAILABLE && Contains(dlb_last_error(), "=OFF")) {
    CHECK(ordered == 0); /* the CUDA backend is not built */
    return;
  }
  CHECK(status == DLB_OK);
  CHECK(ordered == 1);
  CHECK(Contains(log(),
                 "cuEventCreate flags=2 -> ev1\ncuEventRecord ev1 stream=0x1234\n"
                 "cuStreamWaitEvent stream=0x1 ev1\n"));
  CHECK(live() == 1); /* kept for the next exchange (STR-10) */
  fail("cuStreamWaitEvent", 400);
  ordered = 7;
  CHECK_STATUS(dlb_order_streams(kDLCUDA, 1, 0x1234, 1, &ordered), DLB_ERR_RUNTIME_UNAVAILABLE);
  CHECK(ordered == 0);
  CHECK(Contains(dlb_last_error(), "cuStreamWaitEvent failed: CUDA_ERROR_INVALID_HANDLE"));
  CHECK(live() == 0);
  reset();
}

typedef struct Case {
  const char* id;
  void (*run)(void);
} Case;

static const Case kCases[] = {
    {"C-1", TestStatusCodes},
    {"C-2", TestLastError},
    {"C-3", TestThreadLocalError},
    {"C-4", TestCreateDefaults},
    {"C-5", TestSetters},
    {"C-6", TestNullGetters},
    {"C-7", TestSetRelease},
    {"C-8", TestSetReleaseAddress},
    {"C-9", TestTakeRelease},
    {"C-10", TestExportVersioned},
    {"C-11", TestExportOptions},
    {"C-12", TestOptionsStructSize},
    {"C-13", TestExportFailureKeepsHold},
    {"C-14", TestExportLegacy},
    {"C-15", TestImportVersioned},
    {"C-16", TestImportFailureConsumes},
    {"C-17", TestImportOptions},
    {"C-18", TestRoundTrip},
    {"STR-7", TestOrderStreams},
};

int main(int argc, char** argv) {
  size_t i;
  int ran = 0;
  for (i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
    if (argc > 1 && strcmp(argv[1], kCases[i].id) != 0) continue;
    g_case = kCases[i].id;
    kCases[i].run();
    ++ran;
  }
  if (ran == 0) {
    printf("no case named %s\n", argc > 1 ? argv[1] : "");
    return 2;
  }
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
