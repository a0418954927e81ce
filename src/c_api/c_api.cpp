// The C API (include/dlbridge/dlbridge_c.h) over the C++ core. Every entry point that can
// fail runs its body through Guard(), the one place exceptions become status codes.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "core/callback_internal.h"
#include "core/error_internal.h"
#include "dlbridge/device_copy.h"
#include "dlbridge/dlbridge_c.h"
#include "dlbridge/error.h"
#include "dlbridge/from_dlpack.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/runtime.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
#include "dlbridge/to_dlpack.h"

struct dlb_descriptor {
  dlbridge::MemoryDescriptor descriptor;
};

namespace dlbridge {
namespace {

// C-1: the C codes are the negated ErrorCodes; a new ErrorCode needs its DLB_ERR_ macro here.
constexpr int Status(ErrorCode code) { return -static_cast<int>(code); }
static_assert(Status(ErrorCode::kInvalidArgument) == DLB_ERR_INVALID_ARGUMENT, "C status");
static_assert(Status(ErrorCode::kInvalidMemorySpace) == DLB_ERR_INVALID_MEMORY_SPACE, "C status");
static_assert(Status(ErrorCode::kInvalidDescriptor) == DLB_ERR_INVALID_DESCRIPTOR, "C status");
static_assert(Status(ErrorCode::kUnsupportedVersion) == DLB_ERR_UNSUPPORTED_VERSION, "C status");
static_assert(Status(ErrorCode::kInvalidShape) == DLB_ERR_INVALID_SHAPE, "C status");
static_assert(Status(ErrorCode::kInvalidStrides) == DLB_ERR_INVALID_STRIDES, "C status");
static_assert(Status(ErrorCode::kInvalidDtype) == DLB_ERR_INVALID_DTYPE, "C status");
static_assert(Status(ErrorCode::kInvalidFlags) == DLB_ERR_INVALID_FLAGS, "C status");
static_assert(Status(ErrorCode::kUnsupportedDevice) == DLB_ERR_UNSUPPORTED_DEVICE, "C status");
static_assert(Status(ErrorCode::kDeviceMismatch) == DLB_ERR_DEVICE_MISMATCH, "C status");
static_assert(Status(ErrorCode::kMissingDeviceId) == DLB_ERR_MISSING_DEVICE_ID, "C status");
static_assert(Status(ErrorCode::kMissingContext) == DLB_ERR_MISSING_CONTEXT, "C status");
static_assert(Status(ErrorCode::kNullData) == DLB_ERR_NULL_DATA, "C status");
static_assert(Status(ErrorCode::kOutOfBounds) == DLB_ERR_OUT_OF_BOUNDS, "C status");
static_assert(Status(ErrorCode::kOverflow) == DLB_ERR_OVERFLOW, "C status");
static_assert(Status(ErrorCode::kReadOnly) == DLB_ERR_READ_ONLY, "C status");
static_assert(Status(ErrorCode::kOutOfMemory) == DLB_ERR_OUT_OF_MEMORY, "C status");
static_assert(Status(ErrorCode::kRuntimeUnavailable) == DLB_ERR_RUNTIME_UNAVAILABLE, "C status");
static_assert(Status(ErrorCode::kDoubleRelease) == DLB_ERR_DOUBLE_RELEASE, "C status");
static_assert(Status(ErrorCode::kStubLibrary) == DLB_ERR_STUB_LIBRARY, "C status");
static_assert(Status(ErrorCode::kNoDevice) == DLB_ERR_NO_DEVICE, "C status");
static_assert(Status(ErrorCode::kRuntimeNotInitialized) == DLB_ERR_RUNTIME_NOT_INITIALIZED,
              "C status");
static_assert(Status(ErrorCode::kUnknownPointer) == DLB_ERR_UNKNOWN_POINTER, "C status");
static_assert(Status(ErrorCode::kNoHold) == DLB_ERR_NO_HOLD, "C status");
static_assert(Status(ErrorCode::kUnsupportedDtype) == DLB_ERR_UNSUPPORTED_DTYPE, "C status");

// The release types must be interchangeable: C code hands us dlb_release_fn values.
static_assert(std::is_same<dlb_release_fn, ReleaseFunction>::value, "release function type");

// C-3: one message per thread, in a fixed buffer: recording an error must not allocate or throw
// (it runs inside catch); longer messages are cut.
thread_local char tLastError[1024] = "";

int SetError(int status, const char* message) noexcept {
  std::snprintf(tLastError, sizeof tLastError, "%s", message);
  return status;
}

// C-2: the one funnel: no exception crosses the C boundary; each becomes its code and message.
template <class Body>
int Guard(Body&& body) noexcept {
  try {
    body();
    return DLB_OK;
  } catch (const Error& e) {
    return SetError(Status(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return SetError(DLB_ERR_OUT_OF_MEMORY, "dlbridge: out of memory");
  } catch (const std::exception& e) {
    return SetError(DLB_ERR_INTERNAL, e.what());
  } catch (...) {
    return SetError(DLB_ERR_INTERNAL, "dlbridge: unknown exception");
  }
}

[[noreturn]] void Throw(ErrorCode code, const char* where, const char* what) {
  detail::Fail(code, std::string(where) + ": " + what);
}

MemoryDescriptor& Checked(const char* where, dlb_descriptor* handle) {
  if (handle == nullptr) Throw(ErrorCode::kInvalidArgument, where, "descriptor is NULL");
  return handle->descriptor;
}

// C-12: copies a caller's options struct of `given` bytes into `known` (our version, defaults
// pre-filled): fields the caller did not know keep their defaults; NULL keeps them all.
template <class Options>
void ReadOptions(const char* where, const Options* given, Options* known, size_t firstSize) {
  if (given == nullptr) return;
  const size_t size = given->struct_size;
  if (size < firstSize) {
    Throw(ErrorCode::kInvalidArgument, where,
          ("options struct_size is " + std::to_string(size) + "; at least " +
           std::to_string(firstSize) + " (set it to sizeof the struct)")
              .c_str());
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(given);
  for (size_t i = sizeof(Options); i < size; ++i) {
    if (bytes[i] != 0) {
      Throw(ErrorCode::kInvalidArgument, where,
            ("options byte " + std::to_string(i) + " is set but this dlbridge knows only " +
             std::to_string(sizeof(Options)) + " bytes; upgrade dlbridge or leave it 0")
                .c_str());
    }
  }
  std::memcpy(known, given, size < sizeof(Options) ? size : sizeof(Options));
}

// C-11: the C export options as ExportOptions.
ExportOptions ReadExportOptions(const char* where, const dlb_export_options* given) {
  dlb_export_options c = DLB_EXPORT_OPTIONS_INIT;
  // Version 1 ended after level_zero_device: its callers get keep_byte_offset's default.
  ReadOptions(where, given, &c, offsetof(dlb_export_options, keep_byte_offset));
  ExportOptions options;
  options.read_only = c.read_only != 0;
  options.device_id = c.device_id;
  options.allow_unowned = c.allow_unowned != 0;
  options.keep_byte_offset = c.keep_byte_offset != 0;
  options.level_zero_context = c.level_zero_context;
  options.level_zero_device = c.level_zero_device;
  return options;
}

// C-17: the C import options as ImportOptions (Metal: the process-wide resolver).
ImportOptions ReadImportOptions(const char* where, const dlb_import_options* given) {
  dlb_import_options c = DLB_IMPORT_OPTIONS_INIT;
  ReadOptions(where, given, &c, sizeof(dlb_import_options));
  ImportOptions options;
  options.require_writable = c.require_writable != 0;
  options.legacy_read_only = c.legacy_read_only != 0;
  options.allow_null_strides = c.allow_null_strides != 0;
  options.level_zero_context = c.level_zero_context;
  return options;
}

template <class Managed, class Convert>
int Export(const char* where, Convert convert, dlb_descriptor* handle, DLDataType dtype,
           int32_t ndim, const int64_t* shape, const int64_t* strides, uint64_t byteOffset,
           DLDevice device, uint64_t flags, const dlb_export_options* options, Managed** out) {
  return Guard([&] {
    if (out != nullptr) *out = nullptr;  // C-13: NULL on any failure
    MemoryDescriptor& descriptor = Checked(where, handle);
    if (out == nullptr) Throw(ErrorCode::kInvalidArgument, where, "out is NULL");
    const ExportOptions exportOptions = ReadExportOptions(where, options);
    Tensor tensor;
    tensor.layout = TensorLayout::FromArrays(dtype, ndim, shape, strides, byteOffset);
    tensor.device = device;
    tensor.flags = flags;
    // The descriptor visits the Tensor and comes back either way: holding nothing after a
    // successful export (C-10), still holding after a failed one (C-13: the C++ rule).
    tensor.descriptor = std::move(descriptor);
    struct Restore {
      MemoryDescriptor& home;
      Tensor& tensor;
      ~Restore() { home = std::move(tensor.descriptor); }
    } restore{descriptor, tensor};
    *out = convert(std::move(tensor), exportOptions);
  });
}

void FillLayout(const Tensor& tensor, dlb_layout* out) {
  const uint32_t size = out->struct_size;
  std::memset(out, 0, size);  // C-12: zeroes fields newer than this library, too
  out->struct_size = size;
  const TensorLayout& layout = tensor.layout;
  out->ndim = layout.Ndim();
  out->dtype = layout.Dtype();
  out->byte_offset = layout.ByteOffset();
  out->device = tensor.device;
  out->flags = tensor.flags;
  for (int32_t i = 0; i < layout.Ndim(); ++i) {
    out->shape[i] = layout.Shape()[static_cast<size_t>(i)];
    out->strides[i] = layout.Strides()[static_cast<size_t>(i)];
  }
}

template <class Managed>
int Import(const char* where, Managed* managed, const dlb_import_options* options,
           dlb_descriptor** outDescriptor, dlb_layout* outLayout) {
  return Guard([&] {
    if (outDescriptor != nullptr) *outDescriptor = nullptr;
    if (managed == nullptr) Throw(ErrorCode::kInvalidArgument, where, "managed is NULL");
    std::unique_ptr<dlb_descriptor> handle;
    ImportOptions importOptions;
    try {
      // C-16: until FromDLPack owns it, every failure here must consume the tensor itself.
      if (outDescriptor == nullptr) {
        Throw(ErrorCode::kInvalidArgument, where, "out_descriptor is NULL");
      }
      if (outLayout != nullptr && outLayout->struct_size < sizeof(dlb_layout)) {
        Throw(ErrorCode::kInvalidArgument, where,
              ("out_layout->struct_size is " + std::to_string(outLayout->struct_size) +
               "; set it to sizeof(dlb_layout) = " + std::to_string(sizeof(dlb_layout)))
                  .c_str());
      }
      importOptions = ReadImportOptions(where, options);
      handle.reset(new dlb_descriptor);
    } catch (...) {
      if (managed->deleter != nullptr) dlbridge::detail::CallDeleter(managed);
      throw;
    }
    Tensor tensor = FromDLPack(managed, importOptions);  // consumes on failure
    // C-15: the new handle holds the import's release (none for a NULL deleter).
    handle->descriptor = std::move(tensor.descriptor);
    if (outLayout != nullptr) FillLayout(tensor, outLayout);
    *outDescriptor = handle.release();
  });
}

// C-1: no default: -Wswitch (an error on dlbridge's targets) flags a new ErrorCode until it has
// its DLB_ERR_ macro and name here.
const char* StatusName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "DLB_ERR_INVALID_ARGUMENT";
    case ErrorCode::kInvalidMemorySpace: return "DLB_ERR_INVALID_MEMORY_SPACE";
    case ErrorCode::kInvalidDescriptor: return "DLB_ERR_INVALID_DESCRIPTOR";
    case ErrorCode::kUnsupportedVersion: return "DLB_ERR_UNSUPPORTED_VERSION";
    case ErrorCode::kInvalidShape: return "DLB_ERR_INVALID_SHAPE";
    case ErrorCode::kInvalidStrides: return "DLB_ERR_INVALID_STRIDES";
    case ErrorCode::kInvalidDtype: return "DLB_ERR_INVALID_DTYPE";
    case ErrorCode::kInvalidFlags: return "DLB_ERR_INVALID_FLAGS";
    case ErrorCode::kUnsupportedDevice: return "DLB_ERR_UNSUPPORTED_DEVICE";
    case ErrorCode::kDeviceMismatch: return "DLB_ERR_DEVICE_MISMATCH";
    case ErrorCode::kMissingDeviceId: return "DLB_ERR_MISSING_DEVICE_ID";
    case ErrorCode::kMissingContext: return "DLB_ERR_MISSING_CONTEXT";
    case ErrorCode::kNullData: return "DLB_ERR_NULL_DATA";
    case ErrorCode::kOutOfBounds: return "DLB_ERR_OUT_OF_BOUNDS";
    case ErrorCode::kOverflow: return "DLB_ERR_OVERFLOW";
    case ErrorCode::kReadOnly: return "DLB_ERR_READ_ONLY";
    case ErrorCode::kOutOfMemory: return "DLB_ERR_OUT_OF_MEMORY";
    case ErrorCode::kRuntimeUnavailable: return "DLB_ERR_RUNTIME_UNAVAILABLE";
    case ErrorCode::kDoubleRelease: return "DLB_ERR_DOUBLE_RELEASE";
    case ErrorCode::kStubLibrary: return "DLB_ERR_STUB_LIBRARY";
    case ErrorCode::kNoDevice: return "DLB_ERR_NO_DEVICE";
    case ErrorCode::kRuntimeNotInitialized: return "DLB_ERR_RUNTIME_NOT_INITIALIZED";
    case ErrorCode::kUnknownPointer: return "DLB_ERR_UNKNOWN_POINTER";
    case ErrorCode::kNoHold: return "DLB_ERR_NO_HOLD";
    case ErrorCode::kUnsupportedDtype: return "DLB_ERR_UNSUPPORTED_DTYPE";
  }
  return "unknown";
}

// CPY-8: the borrowed DLTensor is imported as a tensor that holds nothing (so the import's
// checks run), copied, and the copy exported; *out and *pending_stream are set last.
void CopyThroughC(const DLTensor* tensor, DLDevice target, const dlb_copy_options* options,
                  DLManagedTensorVersioned** out, int64_t* pending_stream) {
  constexpr const char* kWhere = "dlb_copy_to";
  if (tensor == nullptr) Throw(ErrorCode::kInvalidArgument, kWhere, "tensor is NULL");
  if (out == nullptr) Throw(ErrorCode::kInvalidArgument, kWhere, "out is NULL");
  dlb_copy_options c = DLB_COPY_OPTIONS_INIT;
  ReadOptions(kWhere, options, &c, sizeof(dlb_copy_options));
  CopyOptions copy;
  if (c.stream != DLB_STREAM_DEFAULT) copy.stream = c.stream;
  copy.producer_stream = c.producer_stream;
  copy.synchronous = c.asynchronous == 0;
  copy.level_zero_context = c.level_zero_context;
  copy.level_zero_device = c.level_zero_device;
  DLManagedTensorVersioned borrowed{};  // no deleter: the import holds nothing
  borrowed.version = {1, DLPACK_MINOR_VERSION};
  borrowed.dl_tensor = *tensor;
  ImportOptions import;
  import.allow_null_strides = true;
  import.level_zero_context = c.level_zero_context;
  const Tensor source = FromDLPack(&borrowed, import);
  // The Level Zero handles reach the source's check and the result's export too, both ways.
  ExportOptions handles;
  handles.level_zero_context = c.level_zero_context;
  handles.level_zero_device = c.level_zero_device;
  Tensor result = CopyTo(source, target, copy, handles);
  const int64_t pending = result.stream.has_value() ? *result.stream : -1;
  *out = ToDLPackVersioned(std::move(result), handles);
  if (pending_stream != nullptr) *pending_stream = pending;
}

}  // namespace
}  // namespace dlbridge

using dlbridge::Checked;
using dlbridge::Guard;

extern "C" {

const char* dlb_last_error(void) { return dlbridge::tLastError; }

const char* dlb_status_name(int status) {
  if (status == DLB_OK) return "DLB_OK";
  if (status == DLB_ERR_INTERNAL) return "DLB_ERR_INTERNAL";
  if (status > 0 || status < -1000) return "unknown";
  return dlbridge::StatusName(static_cast<dlbridge::ErrorCode>(-status));
}

// C-4: a new handle is a default MemoryDescriptor; destroy runs a held release once, and
// destroy(NULL) is delete of NULL: nothing.
int dlb_descriptor_create(dlb_descriptor** out) {
  return Guard([&] {
    if (out == nullptr) {
      dlbridge::Throw(dlbridge::ErrorCode::kInvalidArgument, "dlb_descriptor_create",
                      "out is NULL");
    }
    *out = nullptr;
    *out = new dlb_descriptor;
  });
}

void dlb_descriptor_destroy(dlb_descriptor* descriptor) { delete descriptor; }

// C-5: the setters validate as the C++ ones do (a failure changes nothing), hold untouched.
int dlb_descriptor_set(dlb_descriptor* descriptor, int64_t pointer, int64_t size_in_bytes,
                       const char* memory_space, const char* role) {
  return Guard([&] {
    Checked("dlb_descriptor_set", descriptor).Set(pointer, size_in_bytes, memory_space, role);
  });
}

// C-6: the getters never fail: a NULL handle gives 0 / NULL and records no error.
int64_t dlb_descriptor_get_pointer(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetPointer() : 0;
}

int64_t dlb_descriptor_get_size(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetSizeInBytes() : 0;
}

const char* dlb_descriptor_get_memory_space(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetMemorySpace() : nullptr;
}

const char* dlb_descriptor_get_role(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetRole() : nullptr;
}

int dlb_descriptor_set_pointer(dlb_descriptor* descriptor, int64_t pointer) {
  return Guard([&] { Checked("dlb_descriptor_set_pointer", descriptor).SetPointer(pointer); });
}

int dlb_descriptor_set_size(dlb_descriptor* descriptor, int64_t size_in_bytes) {
  return Guard(
      [&] { Checked("dlb_descriptor_set_size", descriptor).SetSizeInBytes(size_in_bytes); });
}

int dlb_descriptor_set_memory_space(dlb_descriptor* descriptor, const char* memory_space) {
  return Guard(
      [&] { Checked("dlb_descriptor_set_memory_space", descriptor).SetMemorySpace(memory_space); });
}

int dlb_descriptor_set_role(dlb_descriptor* descriptor, const char* role) {
  return Guard([&] { Checked("dlb_descriptor_set_role", descriptor).SetRole(role); });
}

// C-7: SetRelease: the old hold is dropped first, NULL clears; a NULL handle calls nothing.
int dlb_descriptor_set_release(dlb_descriptor* descriptor, dlb_release_fn release, void* context) {
  return Guard(
      [&] { Checked("dlb_descriptor_set_release", descriptor).SetRelease(release, context); });
}

// C-8: set_release with both addresses as int64_t.
int dlb_descriptor_set_release_address(dlb_descriptor* descriptor, int64_t release,
                                       int64_t context) {
  return Guard([&] {
    Checked("dlb_descriptor_set_release_address", descriptor).SetReleaseAddress(release, context);
  });
}

int dlb_descriptor_has_ownership(const dlb_descriptor* descriptor) {
  return descriptor && descriptor->descriptor.HasOwnership() ? 1 : 0;
}

// C-9: TakeRelease: the pair is handed over (both NULL when nothing is held); a NULL handle or
// output fails before anything is taken.
int dlb_descriptor_take_release(dlb_descriptor* descriptor, dlb_release_fn* release,
                                void** context) {
  return Guard([&] {
    if (release != nullptr) *release = nullptr;
    if (context != nullptr) *context = nullptr;
    dlbridge::MemoryDescriptor& d = Checked("dlb_descriptor_take_release", descriptor);
    if (release == nullptr || context == nullptr) {
      dlbridge::Throw(dlbridge::ErrorCode::kInvalidArgument, "dlb_descriptor_take_release",
                      "release and context must both be non-NULL");
    }
    dlbridge::ReleaseFunction fn = nullptr;
    void* ctx = nullptr;
    d.TakeRelease(fn, ctx);
    *release = fn;
    *context = ctx;
  });
}

dlb_release_fn dlb_descriptor_get_release(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetRelease() : nullptr;
}

void* dlb_descriptor_get_release_context(const dlb_descriptor* descriptor) {
  return descriptor ? descriptor->descriptor.GetReleaseContext() : nullptr;
}

int dlb_to_dlpack_versioned(dlb_descriptor* descriptor, DLDataType dtype, int32_t ndim,
                            const int64_t* shape, const int64_t* strides, uint64_t byte_offset,
                            DLDevice device, uint64_t flags, const dlb_export_options* options,
                            DLManagedTensorVersioned** out) {
  return dlbridge::Export(
      "dlb_to_dlpack_versioned",
      [](dlbridge::Tensor&& t, const dlbridge::ExportOptions& o) {
        return dlbridge::ToDLPackVersioned(std::move(t), o);
      },
      descriptor, dtype, ndim, shape, strides, byte_offset, device, flags, options, out);
}

// C-14: the legacy export, with the same ownership; ToDLPack refuses read-only tensors.
int dlb_to_dlpack(dlb_descriptor* descriptor, DLDataType dtype, int32_t ndim, const int64_t* shape,
                  const int64_t* strides, uint64_t byte_offset, DLDevice device, uint64_t flags,
                  const dlb_export_options* options, DLManagedTensor** out) {
  return dlbridge::Export(
      "dlb_to_dlpack",
      [](dlbridge::Tensor&& t, const dlbridge::ExportOptions& o) {
        return dlbridge::ToDLPack(std::move(t), o);
      },
      descriptor, dtype, ndim, shape, strides, byte_offset, device, flags, options, out);
}

int dlb_from_dlpack_versioned(DLManagedTensorVersioned* managed, const dlb_import_options* options,
                              dlb_descriptor** out_descriptor, dlb_layout* out_layout) {
  return dlbridge::Import("dlb_from_dlpack_versioned", managed, options, out_descriptor,
                          out_layout);
}

int dlb_from_dlpack(DLManagedTensor* managed, const dlb_import_options* options,
                    dlb_descriptor** out_descriptor, dlb_layout* out_layout) {
  return dlbridge::Import("dlb_from_dlpack", managed, options, out_descriptor, out_layout);
}

// STR-7: the C form of OrderStreams, through Guard.
int dlb_order_streams(int32_t device_type, int32_t device_id, int64_t producer, int64_t consumer,
                      int* ordered) {
  if (ordered != nullptr) *ordered = 0;
  return Guard([&] {
    DLDevice device{};
    device.device_type = static_cast<DLDeviceType>(device_type);
    device.device_id = device_id;
    const bool done = dlbridge::OrderStreams(device, producer, consumer);
    if (ordered != nullptr) *ordered = done ? 1 : 0;
  });
}

// CPY-8: the C form of CopyTo, through Guard.
int dlb_copy_to(const DLTensor* tensor, DLDevice target, const dlb_copy_options* options,
                DLManagedTensorVersioned** out, int64_t* pending_stream) {
  if (out != nullptr) *out = nullptr;
  if (pending_stream != nullptr) *pending_stream = -1;
  return Guard([&] { dlbridge::CopyThroughC(tensor, target, options, out, pending_stream); });
}

}  // extern "C"
