/* A C consumer of dlbridge: the same round trip as consumer.cpp through the C API. */
#include <dlbridge/dlbridge_c.h>
#include <stdio.h>

static int releases = 0;
static void Release(void* context) {
  (void)context;
  ++releases;
}

int main(void) {
  static float data[6];
  const int64_t shape[2] = {2, 3};
  const DLDataType f32 = {kDLFloat, 32, 1};
  const DLDevice derive = {(DLDeviceType)0, 0};
  dlb_descriptor* d = NULL;
  dlb_descriptor* back = NULL;
  DLManagedTensorVersioned* managed = NULL;
  dlb_layout layout;
  layout.struct_size = sizeof layout;
  if (dlb_descriptor_create(&d) != DLB_OK ||
      dlb_descriptor_set(d, (int64_t)(intptr_t)data, sizeof data, "host", "data") != DLB_OK ||
      dlb_descriptor_set_release(d, Release, NULL) != DLB_OK ||
      dlb_to_dlpack_versioned(d, f32, 2, shape, NULL, 0, derive, 0, NULL, &managed) != DLB_OK) {
    printf("consumer_c: FAILED: export: %s\n", dlb_last_error());
    return 1;
  }
  dlb_descriptor_destroy(d);
  if (dlb_from_dlpack_versioned(managed, NULL, &back, &layout) != DLB_OK || layout.ndim != 2) {
    printf("consumer_c: FAILED: import: %s\n", dlb_last_error());
    return 1;
  }
  dlb_descriptor_destroy(back);
  if (releases != 1) {
    printf("consumer_c: FAILED: %d releases, expected 1\n", releases);
    return 1;
  }
  printf("consumer_c: ok\n");
  return 0;
}
