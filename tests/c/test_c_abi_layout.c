/* Compile-only: the layout of every struct the C API exposes, frozen (spec/c-api.md, C-19).
 * Compiling this file is the test. A change here is an ABI break: grow a struct at its end
 * (struct_size tells the versions apart) and add the new field's offset below. */
#include <stddef.h>

#include "dlbridge/dlbridge_c.h"

#define FROZEN(cond) _Static_assert(cond, #cond)

/* The DLPack types the C API passes by value or embeds. */
FROZEN(sizeof(DLDataType) == 4);
FROZEN(sizeof(DLDevice) == 8);

/* Status codes and limits are part of the ABI too. */
FROZEN(DLB_OK == 0 && DLB_ERR_INVALID_ARGUMENT == -1 && DLB_ERR_DOUBLE_RELEASE == -19);
FROZEN(DLB_ERR_STUB_LIBRARY == -20 && DLB_ERR_UNKNOWN_POINTER == -23 && DLB_ERR_NO_HOLD == -24 &&
       DLB_ERR_UNSUPPORTED_DTYPE == -25);
FROZEN(DLB_ERR_OUT_OF_MEMORY == -17 && DLB_ERR_INTERNAL == -1000);
FROZEN(DLB_MAX_DIMS == 64);

/* dlb_export_options, version 1: 32 bytes (allow_unowned was a zero `reserved` field). */
FROZEN(offsetof(dlb_export_options, struct_size) == 0);
FROZEN(offsetof(dlb_export_options, read_only) == 4);
FROZEN(offsetof(dlb_export_options, device_id) == 8);
FROZEN(offsetof(dlb_export_options, allow_unowned) == 12);
FROZEN(offsetof(dlb_export_options, level_zero_context) == 16);
FROZEN(offsetof(dlb_export_options, level_zero_device) == 24);
/* Version 2: 40 bytes. */
FROZEN(offsetof(dlb_export_options, keep_byte_offset) == 32);
FROZEN(offsetof(dlb_export_options, reserved) == 36);
FROZEN(sizeof(dlb_export_options) == 40);

/* dlb_import_options, version 1: 24 bytes. */
FROZEN(offsetof(dlb_import_options, struct_size) == 0);
FROZEN(offsetof(dlb_import_options, require_writable) == 4);
FROZEN(offsetof(dlb_import_options, legacy_read_only) == 8);
FROZEN(offsetof(dlb_import_options, allow_null_strides) == 12);
FROZEN(offsetof(dlb_import_options, level_zero_context) == 16);
FROZEN(sizeof(dlb_import_options) == 24);

/* dlb_layout, version 1: 1064 bytes, no hidden padding. */
FROZEN(offsetof(dlb_layout, struct_size) == 0);
FROZEN(offsetof(dlb_layout, ndim) == 4);
FROZEN(offsetof(dlb_layout, dtype) == 8);
FROZEN(offsetof(dlb_layout, reserved) == 12);
FROZEN(offsetof(dlb_layout, byte_offset) == 16);
FROZEN(offsetof(dlb_layout, device) == 24);
FROZEN(offsetof(dlb_layout, flags) == 32);
FROZEN(offsetof(dlb_layout, shape) == 40);
FROZEN(offsetof(dlb_layout, strides) == 40 + 8 * DLB_MAX_DIMS);
FROZEN(sizeof(dlb_layout) == 40 + 16 * DLB_MAX_DIMS);

/* dlb_copy_options, version 1 (CPY-8): 40 bytes, no hidden padding. */
FROZEN(offsetof(dlb_copy_options, struct_size) == 0);
FROZEN(offsetof(dlb_copy_options, asynchronous) == 4);
FROZEN(offsetof(dlb_copy_options, stream) == 8);
FROZEN(offsetof(dlb_copy_options, producer_stream) == 16);
FROZEN(offsetof(dlb_copy_options, level_zero_context) == 24);
FROZEN(offsetof(dlb_copy_options, level_zero_device) == 32);
FROZEN(sizeof(dlb_copy_options) == 40);
FROZEN(DLB_STREAM_DEFAULT == INT64_MIN);

/* The initialisers fill struct_size with the size the caller compiled against. */
static const dlb_export_options kExportDefaults = DLB_EXPORT_OPTIONS_INIT;
static const dlb_import_options kImportDefaults = DLB_IMPORT_OPTIONS_INIT;
static const dlb_copy_options kCopyDefaults = DLB_COPY_OPTIONS_INIT;
FROZEN(sizeof kExportDefaults == 40 && sizeof kImportDefaults == 24 && sizeof kCopyDefaults == 40);

/* A translation unit must declare something; this also keeps the defaults referenced. */
int dlb_abi_layout_test_anchor(void);
int dlb_abi_layout_test_anchor(void) {
  return kExportDefaults.device_id == -1 && kImportDefaults.struct_size == 24 &&
                 kCopyDefaults.producer_stream == -1
             ? 0
             : 1;
}
