/** @file
 * dlbridge's C API: descriptors, export and import through DLPack, for C and for FFIs.
 * spec/c-api.md gives each rule an ID (C-*) and the test that checks it.
 *
 * Conventions (all functions):
 *  - Functions that can fail return an int status: DLB_OK (0) or a negative DLB_ERR_* code,
 *    the negated dlbridge::ErrorCode. No C++ exception ever leaves this API.
 *  - On failure, dlb_last_error() gives this thread's message naming the field and the value.
 *  - Ownership is written on every function, for success and for failure. The short form:
 *    import always consumes its tensor; export moves the descriptor's hold only on success.
 *  - Releases and deleters may run on any thread: the one that drops the hold.
 *
 * Header: C99 and C++; needs a DLPack >= 1.0 header (dlpack/dlpack.h). */
#ifndef DLBRIDGE_DLBRIDGE_C_H_
#define DLBRIDGE_DLBRIDGE_C_H_

#include <stdint.h>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes: 0, or -(int)dlbridge::ErrorCode (include/dlbridge/error.h). ---- */
/** Success. */
#define DLB_OK 0
#define DLB_ERR_INVALID_ARGUMENT (-1)     /**< A NULL or malformed argument. */
#define DLB_ERR_INVALID_MEMORY_SPACE (-2) /**< Not "host", "cuda", "hip" or "level_zero". */
#define DLB_ERR_INVALID_DESCRIPTOR (-3)   /**< Negative size, or NULL pointer with bytes. */
#define DLB_ERR_UNSUPPORTED_VERSION (-4)  /**< A DLPack major version other than 1. */
#define DLB_ERR_INVALID_SHAPE (-5)        /**< ndim out of range, NULL shape, negative extent. */
#define DLB_ERR_INVALID_STRIDES (-6)      /**< NULL strides where DLPack >= 1.2 forbids them. */
#define DLB_ERR_INVALID_DTYPE (-7)        /**< Bits that do not match the code, lanes 0. */
#define DLB_ERR_INVALID_FLAGS (-8)        /**< Unknown flag bits, or a forbidden combination. */
#define DLB_ERR_UNSUPPORTED_DEVICE (-9)   /**< A device type dlbridge does not map. */
#define DLB_ERR_DEVICE_MISMATCH (-10)     /**< A device contradicting the space or the pointer. */
#define DLB_ERR_MISSING_DEVICE_ID (-11)   /**< A GPU export without a device ordinal. */
#define DLB_ERR_MISSING_CONTEXT (-12)     /**< Level Zero without context, Metal w/o resolver. */
#define DLB_ERR_NULL_DATA (-13)           /**< NULL data for a tensor with elements. */
#define DLB_ERR_OUT_OF_BOUNDS (-14)       /**< The layout reaches outside the buffer. */
#define DLB_ERR_OVERFLOW (-15)            /**< Extent, stride or offset arithmetic overflows. */
#define DLB_ERR_READ_ONLY (-16)           /**< Read-only memory where writable is required. */
#define DLB_ERR_OUT_OF_MEMORY (-17)       /**< An allocation failed (std::bad_alloc included). */
#define DLB_ERR_RUNTIME_UNAVAILABLE (-18) /**< A GPU runtime is needed but not usable. */
#define DLB_ERR_DOUBLE_RELEASE (-19)      /**< Reserved: nothing returns it (see kDoubleRelease). */
#define DLB_ERR_STUB_LIBRARY (-20)        /**< CUDA's link stub was loaded instead of the driver. */
#define DLB_ERR_NO_DEVICE (-21)           /**< The GPU runtime reports no device or driver. */
#define DLB_ERR_RUNTIME_NOT_INITIALIZED (-22) /**< The GPU runtime could not be initialised. */
#define DLB_ERR_UNKNOWN_POINTER (-23)         /**< The runtime does not know the pointer. */
#define DLB_ERR_NO_HOLD (-24)                 /**< Export of a hold-less descriptor, no opt-in. */
#define DLB_ERR_UNSUPPORTED_DTYPE (-25)       /**< A dtype code this build does not know. */
/** Not an ErrorCode: the core threw something other than dlbridge::Error (a dlbridge bug). */
#define DLB_ERR_INTERNAL (-1000)

/** The most dimensions dlbridge accepts (dlbridge::TensorLayout::kMaxDims). */
#define DLB_MAX_DIMS 64

/** This thread's message for its most recent failing dlb_ call; "" before any failure. Never
 * NULL. Successful calls leave it unchanged. Valid until this thread's next failing call. */
DLBRIDGE_API const char* dlb_last_error(void);

/** The macro name of a status ("DLB_OK", "DLB_ERR_OUT_OF_BOUNDS"), or "unknown". Static. */
DLBRIDGE_API const char* dlb_status_name(int status);

/* ---- Descriptors ---- */

/** One buffer (pointer as int64, size in bytes, memory space, role) and the hold that keeps it
 * alive. Opaque: a dlbridge::MemoryDescriptor. Not thread-safe: one thread at a time. */
typedef struct dlb_descriptor dlb_descriptor;

/** Drops a producer's hold on memory; called exactly once, on any thread. It must return
 * normally (a C++ release must not throw: dlbridge swallows and counts a throw, see LT-7). */
typedef void (*dlb_release_fn)(void* context);

/** Creates a descriptor: "host", role "data", pointer 0, size 0, holding nothing. On success
 * the caller owns *out and destroys it with dlb_descriptor_destroy. On failure *out is NULL
 * (when out is not NULL). */
DLBRIDGE_API int dlb_descriptor_create(dlb_descriptor** out);

/** Destroys a descriptor. If it holds a release, the release runs exactly once, here.
 * NULL is a no-op. */
DLBRIDGE_API void dlb_descriptor_destroy(dlb_descriptor* descriptor);

/** Sets the description in one call, validated as the single setters are. The hold is
 * untouched (nothing is released) on success and on failure; on failure nothing changes. */
DLBRIDGE_API int dlb_descriptor_set(dlb_descriptor* descriptor, int64_t pointer,
                                    int64_t size_in_bytes, const char* memory_space,
                                    const char* role);

/** @name Getters
 * A NULL descriptor gives 0 / NULL and records no error. The memory space string
 * is static; the role string lives until the next set, set_role, export or destroy. @{ */
/** The buffer's address as an integer. */
DLBRIDGE_API int64_t dlb_descriptor_get_pointer(const dlb_descriptor* descriptor);
/** The buffer's size in bytes. */
DLBRIDGE_API int64_t dlb_descriptor_get_size(const dlb_descriptor* descriptor);
/** "host", "cuda", "hip" or "level_zero". */
DLBRIDGE_API const char* dlb_descriptor_get_memory_space(const dlb_descriptor* descriptor);
/** The buffer's role ("data" unless set). */
DLBRIDGE_API const char* dlb_descriptor_get_role(const dlb_descriptor* descriptor);
/** @} */

/** @name Setters
 * They never touch the hold; on failure the descriptor is unchanged.
 * A NULL pointer needs size 0; sizes are >= 0; a space is "host", "cuda", "hip" or
 * "level_zero"; a role is any non-NULL string (copied). @{ */
/** Sets the buffer's address; 0 only while the size is 0. */
DLBRIDGE_API int dlb_descriptor_set_pointer(dlb_descriptor* descriptor, int64_t pointer);
/** Sets the size in bytes: >= 0, and 0 while the pointer is 0. */
DLBRIDGE_API int dlb_descriptor_set_size(dlb_descriptor* descriptor, int64_t size_in_bytes);
/** Sets the memory space by name. */
DLBRIDGE_API int dlb_descriptor_set_memory_space(dlb_descriptor* descriptor,
                                                 const char* memory_space);
/** Sets the role. */
DLBRIDGE_API int dlb_descriptor_set_role(dlb_descriptor* descriptor, const char* role);
/** @} */

/** Makes the descriptor hold the memory with release(context), called once when the hold is
 * dropped (destroy, a later set_release, an export's deleter). Any earlier hold is dropped
 * first (its release runs now). A NULL release clears the hold; context is then ignored.
 * On failure (NULL descriptor) nothing is called: the caller keeps the duty to release. */
DLBRIDGE_API int dlb_descriptor_set_release(dlb_descriptor* descriptor, dlb_release_fn release,
                                            void* context);

/** dlb_descriptor_set_release with both addresses as integers, for FFIs. Same ownership. */
DLBRIDGE_API int dlb_descriptor_set_release_address(dlb_descriptor* descriptor, int64_t release,
                                                    int64_t context);

/** 1 when the descriptor keeps its memory alive (a release, or a C++ owner), else 0.
 * NULL gives 0. */
DLBRIDGE_API int dlb_descriptor_has_ownership(const dlb_descriptor* descriptor);

/** Hands the release duty to the caller. On DLB_OK with *release non-NULL, the caller must
 * call (*release)(*context) exactly once and the descriptor holds nothing any more; when
 * nothing was held both are NULL. A C++ owner hold becomes a pair whose call drops that
 * reference (a small block is allocated: DLB_ERR_OUT_OF_MEMORY keeps the hold). On failure
 * both outputs are NULL (where given) and the descriptor keeps its hold. */
DLBRIDGE_API int dlb_descriptor_take_release(dlb_descriptor* descriptor, dlb_release_fn* release,
                                             void** context);

/** @name The release
 * The release and its context, or NULL when the hold is not a release (or descriptor is NULL).
 * Reading them transfers nothing: the descriptor still calls the release. @{ */
/** The release function. */
DLBRIDGE_API dlb_release_fn dlb_descriptor_get_release(const dlb_descriptor* descriptor);
/** The release's context. */
DLBRIDGE_API void* dlb_descriptor_get_release_context(const dlb_descriptor* descriptor);
/** @} */

/* ---- Export and import ---- */

/** @name Options
 * Options structs grow at the end. Set struct_size to sizeof(the struct) as your header
 * declares it (the _INIT macros do), so an older library can tell what you filled: sizes
 * below the first version's are DLB_ERR_INVALID_ARGUMENT; bytes past what the library knows
 * must be zero (else DLB_ERR_INVALID_ARGUMENT). A NULL options pointer means the defaults. @{ */

/** Options for dlb_to_dlpack_versioned and dlb_to_dlpack (dlbridge::ExportOptions).
 * Start from DLB_EXPORT_OPTIONS_INIT. */
typedef struct dlb_export_options {
  uint32_t struct_size; /**< sizeof(dlb_export_options). */
  uint32_t read_only;   /**< Non-zero: set DLPACK_FLAG_BITMASK_READ_ONLY. */
  int32_t device_id;    /**< GPU ordinal when `device` names none; -1 = not given. */
  /** Non-zero: a descriptor that holds nothing may be exported (the caller keeps the memory
   * alive until the consumer's deleter runs); zero: that fails with DLB_ERR_NO_HOLD. */
  uint32_t allow_unowned;
  void* level_zero_context; /**< ze_context_handle_t; required for "level_zero". */
  void* level_zero_device;  /**< ze_device_handle_t; required for "level_zero". */
  /* Version 2 (40 bytes) from here. */
  /** Non-zero: data is the descriptor's pointer and byte_offset the layout's; zero: data is
   * element zero's address and byte_offset 0 (device types with address arithmetic). */
  uint32_t keep_byte_offset;
  uint32_t reserved; /**< Zero. Keeps the size a multiple of 8 without hidden padding. */
} dlb_export_options;

/** The default export options, struct_size set. */
#define DLB_EXPORT_OPTIONS_INIT \
  { sizeof(dlb_export_options), 0, -1, 0, NULL, NULL, 0, 0 }

/** Options for dlb_from_dlpack_versioned and dlb_from_dlpack (dlbridge::ImportOptions).
 * Start from DLB_IMPORT_OPTIONS_INIT. */
typedef struct dlb_import_options {
  uint32_t struct_size;        /**< sizeof(dlb_import_options). */
  uint32_t require_writable;   /**< Non-zero: read-only input fails with DLB_ERR_READ_ONLY. */
  uint32_t legacy_read_only;   /**< Non-zero: legacy tensors import as read-only. */
  uint32_t allow_null_strides; /**< Non-zero: accept NULL strides from DLPack >= 1.2. */
  void* level_zero_context;    /**< The kDLOneAPI pointer's context; NULL rejects kDLOneAPI. */
} dlb_import_options;
/* kDLMetal imports use the process-wide C++ resolver (dlbridge::SetMetalResolver), if any. */

/** The default import options, struct_size set. */
#define DLB_IMPORT_OPTIONS_INIT \
  { sizeof(dlb_import_options), 0, 0, 0, NULL }
/** @} */

/** What an import reports besides the descriptor: how the elements sit in its buffer, and
 * where. Fixed arrays: no allocation, nothing to free. The caller sets struct_size. */
typedef struct dlb_layout {
  uint32_t struct_size;          /**< Set by the caller: sizeof(dlb_layout). */
  int32_t ndim;                  /**< 0..DLB_MAX_DIMS. */
  DLDataType dtype;              /**< Element type. */
  uint32_t reserved;             /**< Zero. Keeps byte_offset 8-aligned. */
  uint64_t byte_offset;          /**< Bytes from the descriptor's pointer to element 0. */
  DLDevice device;               /**< The producer's device (device_id 0 for CPU-like types). */
  uint64_t flags;                /**< DLPACK_FLAG_BITMASK_* bits. */
  int64_t shape[DLB_MAX_DIMS];   /**< Extents; entries from ndim on are 0. */
  int64_t strides[DLB_MAX_DIMS]; /**< In elements, always filled (C-contiguous for NULL). */
} dlb_layout;

/** Exports the descriptor's buffer as a DLPack 1.x tensor (the minor version dlbridge was
 * built with). Zero-copy: data is element zero's address (the pointer plus byte_offset) and
 * the emitted byte_offset 0, unless options->keep_byte_offset asks for the pointer and
 * byte_offset as given. The layout is dtype, ndim, shape, strides (NULL = C-contiguous; in
 * elements) and byte_offset from the pointer; device.device_type 0 derives the device from
 * the memory space; flags are DLPACK_FLAG_*. A descriptor that holds nothing fails with
 * DLB_ERR_NO_HOLD unless options->allow_unowned is set.
 * On success: the descriptor's hold moves into *out (the descriptor keeps its description,
 * holds nothing, and must still be destroyed). The consumer calls (*out)->deleter(*out)
 * exactly once; that drops the hold (runs the release) on the calling thread. A descriptor
 * imported from a versioned tensor and exported unchanged hands back that same tensor.
 * On failure: *out is NULL (when out is not NULL), the descriptor keeps its hold, nothing
 * is released. */
DLBRIDGE_API int dlb_to_dlpack_versioned(dlb_descriptor* descriptor, DLDataType dtype, int32_t ndim,
                                         const int64_t* shape, const int64_t* strides,
                                         uint64_t byte_offset, DLDevice device, uint64_t flags,
                                         const dlb_export_options* options,
                                         DLManagedTensorVersioned** out);

/** Legacy (pre-1.0) export; prefer dlb_to_dlpack_versioned. A legacy tensor cannot say
 * read-only or padded sub-byte: those fail (DLB_ERR_READ_ONLY, DLB_ERR_INVALID_FLAGS).
 * Ownership as for dlb_to_dlpack_versioned (re-export hands back legacy originals). */
DLBRIDGE_API int dlb_to_dlpack(dlb_descriptor* descriptor, DLDataType dtype, int32_t ndim,
                               const int64_t* shape, const int64_t* strides, uint64_t byte_offset,
                               DLDevice device, uint64_t flags, const dlb_export_options* options,
                               DLManagedTensor** out);

/** Imports a versioned tensor. Always consumes `managed` (when not NULL):
 *  - on success, *out_descriptor is a new descriptor the caller destroys; it spans exactly
 *    the bytes the tensor can reach and holds a release that calls managed->deleter(managed)
 *    once (a NULL deleter gives no hold). *out_layout (optional: may be NULL) is filled, its
 *    bytes past what this library knows zeroed;
 *  - on failure, including bad arguments (NULL out_descriptor, short struct_size), the
 *    deleter has been called exactly once before return, and *out_descriptor is NULL.
 * A major version other than 1 is rejected touching nothing but version, deleter, flags. */
DLBRIDGE_API int dlb_from_dlpack_versioned(DLManagedTensorVersioned* managed,
                                           const dlb_import_options* options,
                                           dlb_descriptor** out_descriptor, dlb_layout* out_layout);

/** Imports a legacy tensor, with the same ownership rules. NULL strides mean C-contiguous;
 * options->legacy_read_only marks the import read-only. */
DLBRIDGE_API int dlb_from_dlpack(DLManagedTensor* managed, const dlb_import_options* options,
                                 dlb_descriptor** out_descriptor, dlb_layout* out_layout);

/** Stream ordering (dlbridge::OrderStreams; spec/streams.md): makes work queued later on stream
 * `consumer` wait for the work queued so far on stream `producer`, both Python DLPack stream
 * values of device {device_type, device_id} (CUDA: 1 legacy default, 2 per-thread default,
 * other a CUstream; ROCm: 0 null stream, other a hipStream_t; -1 orders nothing). On DLB_OK,
 * *ordered (when `ordered` is not NULL) is 1 when an event was recorded and waited on, 0 when
 * nothing was needed (-1, equal streams, a device without streams). On failure *ordered is 0:
 * DLB_ERR_INVALID_ARGUMENT for a stream value the device does not accept, DLB_ERR_RUNTIME_*
 * (and DLB_ERR_STUB_LIBRARY, DLB_ERR_NO_DEVICE) when the runtime cannot be used or a driver
 * call fails; dlb_last_error() names the call. Owns nothing; a failure leaks nothing. */
DLBRIDGE_API int dlb_order_streams(int32_t device_type, int32_t device_id, int64_t producer,
                                   int64_t consumer, int* ordered);

/** "No stream given" in dlb_copy_options: the runtime's default stream (CUDA 1, ROCm 0). */
#define DLB_STREAM_DEFAULT INT64_MIN

/** Options for dlb_copy_to (dlbridge::CopyOptions). Start from DLB_COPY_OPTIONS_INIT. */
typedef struct dlb_copy_options {
  uint32_t struct_size; /**< sizeof(dlb_copy_options). */
  /** Non-zero: a copy to GPU memory may return still queued (see dlb_copy_to's
   * pending_stream); a copy to host memory is always complete on return. Zero: it returns
   * once the copy is complete. */
  uint32_t asynchronous;
  /** The stream the copy is queued on (a Python DLPack stream value of the runtime that runs
   * it), or DLB_STREAM_DEFAULT. */
  int64_t stream;
  /** The stream the source's writes may still be pending on; -1: nothing pending. */
  int64_t producer_stream;
  void* level_zero_context; /**< ze_context_handle_t of Level Zero memory (NULL: registered). */
  void* level_zero_device;  /**< ze_device_handle_t of Level Zero memory (NULL: registered). */
} dlb_copy_options;

/** The default copy options, struct_size set. */
#define DLB_COPY_OPTIONS_INIT \
  { sizeof(dlb_copy_options), 0, DLB_STREAM_DEFAULT, -1, NULL, NULL }

/** Copies (dlbridge::CopyTo; spec/copies.md) the elements `tensor` describes into new
 * memory on `target` (kDLCPU device 0, kDLCUDA, kDLROCM, kDLOneAPI): host to GPU, GPU to host
 * or on one GPU, through the runtime, any strides and dtypes (sub-byte packed). `tensor` is
 * borrowed: it is read, never changed or freed (NULL strides: C-contiguous); its memory must
 * stay valid until the call returns (and, for a pending copy, until the copy completes).
 * On success: *out is a new C-contiguous versioned tensor (byte_offset 0, flags 0, data
 * 256-byte aligned) that owns the copy: the consumer calls (*out)->deleter(*out) exactly once,
 * on any thread, which frees the memory (GPU memory through its runtime). *pending_stream
 * (when not NULL) is the stream the copy is still queued on, or -1 when it is complete (always
 * -1 for a kDLCPU target).
 * On failure: *out is NULL, *pending_stream -1, nothing is allocated or kept, and
 * dlb_last_error() names the runtime call that failed (DLB_ERR_RUNTIME_UNAVAILABLE), or the
 * field that was wrong. */
DLBRIDGE_API int dlb_copy_to(const DLTensor* tensor, DLDevice target,
                             const dlb_copy_options* options, DLManagedTensorVersioned** out,
                             int64_t* pending_stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLBRIDGE_DLBRIDGE_C_H_ */
