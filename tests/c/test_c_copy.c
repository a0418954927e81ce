/* CPY-8: dlb_copy_to from C (spec/copies.md). Host to host always; with the fake CUDA driver
 * (ctest sets DLBRIDGE_CUDA_LIBRARY to it) also host to device and back, and a failed
 * allocation. Exit status 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L /* setenv in platform.h */

#include <dlbridge/dlbridge_c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

static int failures = 0;
#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      ++failures;                                                                        \
      fprintf(stderr, "FAILED CPY-8 (line %d): %s\n  last error: %s\n", __LINE__, #cond, \
              dlb_last_error());                                                         \
    }                                                                                    \
  } while (0)

static int Contains(const char* text, const char* part) {
  return text != NULL && strstr(text, part) != NULL;
}

static void (*FakeFunction(void* handle, const char* name))(void) {
  void (*fn)(void) = NULL;
  void* p = DlbTestSymbol(handle, name);
  if (p != NULL) memcpy(&fn, &p, sizeof fn);
  return fn;
}

int main(void) {
  float values[6] = {0, 1, 2, 3, 4, 5};
  int64_t shape[2] = {3, 2};
  int64_t transposed[2] = {1, 3}; /* the (3, 2) transpose of a (2, 3) C-contiguous array */
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = values;
  t.device.device_type = kDLCPU;
  t.ndim = 2;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = transposed;
  const DLDevice cpu = {kDLCPU, 0};

  /* Host to host: a new C-contiguous, aligned tensor the caller frees through its deleter. */
  DLManagedTensorVersioned* copy = NULL;
  int64_t pending = 7;
  CHECK(dlb_copy_to(&t, cpu, NULL, &copy, &pending) == DLB_OK);
  CHECK(pending == -1);
  if (copy != NULL) {
    const float* c = (const float*)copy->dl_tensor.data;
    const float expected[6] = {0, 3, 1, 4, 2, 5};
    CHECK(memcmp(c, expected, sizeof expected) == 0);
    CHECK((uintptr_t)copy->dl_tensor.data % 256 == 0);
    CHECK(copy->dl_tensor.strides[0] == 2 && copy->dl_tensor.strides[1] == 1);
    copy->deleter(copy);
  }
  CHECK(values[1] == 1.0f); /* the source is not changed */

  /* Bad arguments and targets: a status, *out NULL. */
  copy = (DLManagedTensorVersioned*)&copy;
  CHECK(dlb_copy_to(NULL, cpu, NULL, &copy, NULL) == DLB_ERR_INVALID_ARGUMENT);
  CHECK(copy == NULL);
  CHECK(Contains(dlb_last_error(), "dlb_copy_to: tensor is NULL"));
  const DLDevice metal = {kDLMetal, 0};
  CHECK(dlb_copy_to(&t, metal, NULL, &copy, NULL) == DLB_ERR_UNSUPPORTED_DEVICE);
  CHECK(copy == NULL);
  dlb_copy_options options = DLB_COPY_OPTIONS_INIT;
  options.struct_size = 4;
  CHECK(dlb_copy_to(&t, cpu, &options, &copy, NULL) == DLB_ERR_INVALID_ARGUMENT);

  const char* fake = getenv("DLBRIDGE_CUDA_LIBRARY");
  if (fake != NULL && fake[0] != '\0') {
    void* handle = DlbTestOpenLibrary(fake);
    CHECK(handle != NULL);
    int (*live)(void) = (int (*)(void))FakeFunction(handle, "fake_driver_live_allocations");
    void (*fail)(const char*, int) =
        (void (*)(const char*, int))FakeFunction(handle, "fake_driver_fail");
    CHECK(live != NULL && fail != NULL);
    const DLDevice gpu = {kDLCUDA, 0};
    DLManagedTensorVersioned* up = NULL;
    const int status = dlb_copy_to(&t, gpu, NULL, &up, &pending);
    if (status == DLB_ERR_RUNTIME_UNAVAILABLE && Contains(dlb_last_error(), "=OFF")) {
      CHECK(up == NULL); /* the CUDA backend is not built */
    } else if (live != NULL && fail != NULL) {
      CHECK(status == DLB_OK);
      CHECK(up != NULL && up->dl_tensor.device.device_type == kDLCUDA);
      CHECK(live() == 1);
      DLManagedTensorVersioned* down = NULL;
      if (up != NULL) CHECK(dlb_copy_to(&up->dl_tensor, cpu, NULL, &down, NULL) == DLB_OK);
      if (down != NULL) {
        const float expected[6] = {0, 3, 1, 4, 2, 5};
        CHECK(memcmp(down->dl_tensor.data, expected, sizeof expected) == 0);
        down->deleter(down);
      }
      if (up != NULL) up->deleter(up);
      CHECK(live() == 0); /* the deleter freed the device copy through the driver */
      fail("cuMemAlloc", 2);
      CHECK(dlb_copy_to(&t, gpu, NULL, &up, NULL) == DLB_ERR_RUNTIME_UNAVAILABLE);
      CHECK(up == NULL);
      CHECK(Contains(dlb_last_error(), "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY"));
      CHECK(live() == 0);
    }
  }
  /* Level Zero (ctest sets DLBRIDGE_LEVEL_ZERO_LIBRARY to the fake loader): the context and
   * device of dlb_copy_options reach the copy and the export of its result, both ways. */
  const char* fake_ze = getenv("DLBRIDGE_LEVEL_ZERO_LIBRARY");
  if (fake_ze != NULL && fake_ze[0] != '\0') {
    void* handle = DlbTestOpenLibrary(fake_ze);
    CHECK(handle != NULL);
    int (*live)(void) = (int (*)(void))FakeFunction(handle, "fake_driver_live_allocations");
    void* (*device_of)(void) =
        (void* (*)(void))FakeFunction(handle, "fake_driver_level_zero_device");
    CHECK(live != NULL && device_of != NULL);
    const DLDevice ze = {kDLOneAPI, 0};
    int context = 0; /* any non-null handle: the fake checks only that one is given */
    dlb_copy_options ze_options = DLB_COPY_OPTIONS_INIT;
    ze_options.level_zero_context = &context;
    ze_options.level_zero_device = device_of != NULL ? device_of() : NULL;
    DLManagedTensorVersioned* up = NULL;
    const int status = dlb_copy_to(&t, ze, &ze_options, &up, NULL);
    if (status == DLB_ERR_RUNTIME_UNAVAILABLE && Contains(dlb_last_error(), "=OFF")) {
      CHECK(up == NULL); /* the Level Zero backend is not built */
    } else if (live != NULL && device_of != NULL) {
      CHECK(status == DLB_OK);
      CHECK(up != NULL && up->dl_tensor.device.device_type == kDLOneAPI);
      CHECK(live() == (up != NULL ? 1 : 0));
      DLManagedTensorVersioned* down = NULL;
      if (up != NULL) {
        CHECK(dlb_copy_to(&up->dl_tensor, cpu, &ze_options, &down, NULL) == DLB_OK);
      }
      if (down != NULL) {
        const float expected[6] = {0, 3, 1, 4, 2, 5};
        CHECK(memcmp(down->dl_tensor.data, expected, sizeof expected) == 0);
        down->deleter(down);
      }
      if (up != NULL) up->deleter(up);
      CHECK(live() == 0);
      /* Down from Level Zero memory the caller made (the fake's device range). */
      void* (*base)(void) = (void* (*)(void))FakeFunction(handle, "fake_driver_device_base");
      CHECK(base != NULL);
      if (base != NULL) {
        memcpy(base(), values, sizeof values);
        DLTensor on_device = t;
        on_device.data = base();
        on_device.device = ze;
        on_device.strides = NULL;
        CHECK(dlb_copy_to(&on_device, cpu, &ze_options, &down, NULL) == DLB_OK);
        if (down != NULL) {
          CHECK(memcmp(down->dl_tensor.data, values, sizeof values) == 0);
          down->deleter(down);
        }
      }
    }
  }
  if (failures == 0) printf("CPY-8: every check passed\n");
  return failures == 0 ? 0 : 1;
}
