// PY-18: the DLPack 1.3 C exchange API, one static table, published on dlbridge.Tensor's
// type as __dlpack_c_exchange_api__. Compiled only against a >= 1.3 header.
#include "py_internal.h"

#if DLBRIDGE_PY_EXCHANGE_API

namespace dlbpy {
namespace {

const char* KindName(PyObject* exceptionType) {
  if (exceptionType == PyExc_BufferError) return "BufferError";
  if (exceptionType == PyExc_MemoryError) return "MemoryError";
  return "ValueError";
}

using SetErrorFn = void (*)(void* errorContext, const char* kind, const char* message);

// PY-37: reports an allocator failure. Through SetError when given; with a NULL SetError, into
// the Python error indicator when this thread holds the GIL (a consumer calling from Python
// code), else dropped, as the header allows: never a call through NULL.
void Report(SetErrorFn setError, void* errorContext, const char* kind, const char* message) {
  if (setError != nullptr) {
    setError(errorContext, kind, message);
    return;
  }
  if (!Py_IsInitialized() || PyGILState_Check() == 0) return;
  PyObject* type = PyExc_ValueError;
  if (std::strcmp(kind, "BufferError") == 0) type = PyExc_BufferError;
  if (std::strcmp(kind, "MemoryError") == 0) type = PyExc_MemoryError;
  PyErr_SetString(type, message);
}

// PY-37: the prototype's own size arithmetic, checked before the core allocates: every extent
// and the product of extents times the element's bits must fit int64, and the message names
// the field that did not.
bool CheckPrototypeSize(const DLTensor& prototype, std::string* message) {
  if (prototype.ndim < 0 || prototype.ndim > dlbridge::TensorLayout::kMaxDims) {
    *message = "dlbridge allocator: prototype->ndim is " + std::to_string(prototype.ndim) +
               "; it must be in 0.." + std::to_string(dlbridge::TensorLayout::kMaxDims);
    return false;
  }
  if (prototype.ndim > 0 && prototype.shape == nullptr) {
    *message =
        "dlbridge allocator: prototype->shape is NULL with ndim " + std::to_string(prototype.ndim);
    return false;
  }
  int64_t count = 1;
  for (int32_t i = 0; i < prototype.ndim; ++i) {
    const int64_t extent = prototype.shape[i];
    if (extent < 0) {
      *message = "dlbridge allocator: prototype->shape[" + std::to_string(i) + "] is " +
                 std::to_string(extent) + "; extents must be >= 0";
      return false;
    }
    if (__builtin_mul_overflow(count, extent, &count)) {
      *message = "dlbridge allocator: prototype->shape[" + std::to_string(i) + "] (" +
                 std::to_string(extent) +
                 ") makes the element count pass INT64_MAX; the tensor is too large";
      return false;
    }
  }
  const int64_t bits = int64_t{prototype.dtype.bits} * prototype.dtype.lanes;
  int64_t totalBits = 0;
  if (__builtin_mul_overflow(count, bits, &totalBits)) {
    *message = "dlbridge allocator: prototype->dtype (" + std::to_string(bits) +
               " bits per element) times the element count (" + std::to_string(count) +
               ") passes INT64_MAX bits; the tensor is too large";
    return false;
  }
  return true;
}

// PY-62: the no-sync functions hand the tensor over without ordering: its consumer launches on
// current_work_stream. A tensor whose producer stream is another one would race that work, so
// it is refused (BufferError) rather than handed over quietly.
// `device` is the one exported (resolved from the pointer when the tensor names none).
bool PendingWorkIsOnTheCurrentStream(const dlbridge::Tensor& t, DLDevice device) {
  if (!t.stream.has_value() || *t.stream == -1) return true;  // nothing pending
  if (!dlbridge::OrdersStreams(dlbridge::StreamFamilyOf(device.device_type))) return true;
  int64_t current = 0;
  try {
    current = CurrentStream(device);
  } catch (...) {  // a failed lock: the C callers must not see an exception
    PyErr_SetString(PyExc_RuntimeError, "dlbridge exchange API: the current stream is unknown");
    return false;
  }
  if (*t.stream == current) return true;
  PyErr_Format(PyExc_BufferError,
               "dlbridge exchange API: the tensor's producer stream is %lld but "
               "current_work_stream for device (%d, %d) is %lld; a no-sync consumer would not "
               "wait for the producer's work: use __dlpack__(stream=...), or "
               "dlbridge.set_current_stream(device, %lld) first",
               static_cast<long long>(*t.stream), static_cast<int>(device.device_type),
               static_cast<int>(device.device_id), static_cast<long long>(current),
               static_cast<long long>(*t.stream));
  return false;
}

// PY-37: *out is NULL on every failure, SetError is called exactly then, and no C++ exception
// leaves. The size arithmetic is the prototype's (CheckPrototypeSize), then the core's
// (AllocateHostTensor, overflow-checked itself).
int ApiAllocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* errorContext,
                 SetErrorFn setError) {
  if (out != nullptr) *out = nullptr;
  try {
    if (prototype == nullptr || out == nullptr) {
      Report(setError, errorContext, "ValueError",
             "dlbridge allocator: prototype and out must not be NULL");
      return -1;
    }
    if (prototype->device.device_type != kDLCPU) {
      Report(setError, errorContext, "BufferError",
             "dlbridge allocator: only kDLCPU memory can be allocated");
      return -1;
    }
    std::string message;
    if (!CheckPrototypeSize(*prototype, &message)) {
      Report(setError, errorContext, "ValueError", message.c_str());
      return -1;
    }
    *out = dlbridge::ToDLPackVersioned(
        dlbridge::AllocateHostTensor(prototype->dtype, prototype->ndim, prototype->shape));
    return 0;
  } catch (const dlbridge::Error& e) {
    Report(setError, errorContext, KindName(ExceptionFor(e.code())), PythonMessage(e).c_str());
  } catch (...) {
    Report(setError, errorContext, "MemoryError", "dlbridge allocator: out of memory");
  }
  return -1;
}

bool IsTensor(PyObject* obj) {
  if (PyObject_TypeCheck(obj, g_tensor_type)) return true;
  PyErr_Format(PyExc_TypeError, "dlbridge exchange API: expected a dlbridge.Tensor, not %.100s",
               Py_TYPE(obj)->tp_name);
  return false;
}

// PY-37: *out is NULL on every failure (with a Python exception set). No stream ordering
// ("no_sync", see PY-58): the consumer orders its work after current_work_stream itself.
int ApiFromPyObject(void* pyObject, DLManagedTensorVersioned** out) {
  if (out == nullptr) {
    PyErr_SetString(PyExc_ValueError, "dlbridge exchange API: out must not be NULL");
    return -1;
  }
  *out = nullptr;
  auto* obj = static_cast<PyObject*>(pyObject);
  if (obj == nullptr) {
    PyErr_SetString(PyExc_ValueError, "dlbridge exchange API: py_object must not be NULL");
    return -1;
  }
  if (!IsTensor(obj)) return -1;
  DLManagedTensorVersioned* m = nullptr;
  DLB_TRY
  m = ExportVersioned(obj);
  DLB_CATCH(-1)
  // A success with an exception set is a failure; so is work pending on another stream (see
  // PY-62), known once the export has resolved the device.
  if (PyErr_Occurred() != nullptr ||
      !PendingWorkIsOnTheCurrentStream(AsTensor(obj)->t, m->dl_tensor.device)) {
    m->deleter(m);
    return -1;
  }
  *out = m;
  return 0;
}

int ApiToPyObject(DLManagedTensorVersioned* tensor, void** out) {
  if (out == nullptr) {
    if (tensor != nullptr && tensor->deleter != nullptr) tensor->deleter(tensor);  // stolen
    PyErr_SetString(PyExc_ValueError, "dlbridge exchange API: out_py_object must not be NULL");
    return -1;
  }
  *out = nullptr;
  PyObject* obj = ImportManaged(tensor);
  if (obj == nullptr) return -1;
  if (PyErr_Occurred() != nullptr) {  // a success with an exception set is a failure
    Py_DECREF(obj);
    return -1;
  }
  *out = obj;
  return 0;
}

int ApiDLTensorFromPyObject(void* pyObject, DLTensor* out) {
  auto* obj = static_cast<PyObject*>(pyObject);
  if (obj == nullptr || out == nullptr) {
    PyErr_SetString(PyExc_ValueError, "dlbridge exchange API: py_object and out must not be NULL");
    return -1;
  }
  if (!IsTensor(obj)) return -1;
  const dlbridge::Tensor& t = AsTensor(obj)->t;
  DLB_TRY
  // The export's checks (bounds, device, dtype), without a hold; shape and strides then
  // point into the tensor's own layout, valid while the object lives and is unchanged.
  *out = VersionedPlan(AsTensor(obj)).View();
  out->shape = out->ndim > 0 ? const_cast<int64_t*>(t.layout.Shape().data) : nullptr;
  out->strides = out->ndim > 0 ? const_cast<int64_t*>(t.layout.Strides().data) : nullptr;
  DLB_CATCH(-1)
  if (!PendingWorkIsOnTheCurrentStream(t, out->device)) return -1;  // see PY-62
  return 0;
}

// (see PY-60) The current stream of the device as a handle; NULL where there is none (kDLCPU
// and every type without streams), as the header allows. Any thread, without the GIL.
int ApiCurrentWorkStream(DLDeviceType deviceType, int32_t deviceId, void** outStream) {
  if (outStream == nullptr) return 0;  // nothing to write; no Python exception without the GIL
  *outStream = CurrentWorkStreamHandle(deviceType, deviceId);
  return 0;
}

}  // namespace

DLPackExchangeAPI g_exchange_api = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, nullptr},
    &ApiAllocator,
    &ApiFromPyObject,
    &ApiToPyObject,
    &ApiDLTensorFromPyObject,
    &ApiCurrentWorkStream,
};

}  // namespace dlbpy

#endif  // DLBRIDGE_PY_EXCHANGE_API
