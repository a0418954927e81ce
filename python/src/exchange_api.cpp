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

int ApiAllocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* errorContext,
                 void (*setError)(void* errorContext, const char* kind, const char* message)) {
  try {
    if (prototype == nullptr || out == nullptr) {
      setError(errorContext, "ValueError",
               "dlbridge allocator: prototype and out must not be NULL");
      return -1;
    }
    if (prototype->device.device_type != kDLCPU) {
      setError(errorContext, "BufferError",
               "dlbridge allocator: only kDLCPU memory can be allocated");
      return -1;
    }
    *out = dlbridge::ToDLPackVersioned(
        dlbridge::AllocateHostTensor(prototype->dtype, prototype->ndim, prototype->shape));
    return 0;
  } catch (const dlbridge::Error& e) {
    setError(errorContext, KindName(ExceptionFor(e.code())), e.what());
  } catch (...) {
    setError(errorContext, "MemoryError", "dlbridge allocator: out of memory");
  }
  return -1;
}

int ApiFromPyObject(void* pyObject, DLManagedTensorVersioned** out) {
  auto* obj = static_cast<PyObject*>(pyObject);
  if (!PyObject_TypeCheck(obj, g_tensor_type)) {
    PyErr_Format(PyExc_TypeError, "dlbridge exchange API: expected a dlbridge.Tensor, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  DLManagedTensorVersioned* m = nullptr;
  DLB_TRY
  m = ExportVersioned(obj);
  DLB_CATCH(-1)
  if (PyErr_Occurred() != nullptr) {  // a success with an exception set is a failure
    m->deleter(m);
    return -1;
  }
  *out = m;
  return 0;
}

int ApiToPyObject(DLManagedTensorVersioned* tensor, void** out) {
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
  if (!PyObject_TypeCheck(obj, g_tensor_type)) {
    PyErr_Format(PyExc_TypeError, "dlbridge exchange API: expected a dlbridge.Tensor, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  const dlbridge::Tensor& t = AsTensor(obj)->t;
  DLB_TRY
  // The export's checks (bounds, device, dtype), without a hold; shape and strides then
  // point into the tensor's own layout, valid while the object lives and is unchanged.
  *out = VersionedPlan(AsTensor(obj)).View();
  out->shape = out->ndim > 0 ? const_cast<int64_t*>(t.layout.Shape().data) : nullptr;
  out->strides = out->ndim > 0 ? const_cast<int64_t*>(t.layout.Strides().data) : nullptr;
  DLB_CATCH(-1)
  return 0;
}

int ApiCurrentWorkStream(DLDeviceType, int32_t, void** outStream) {
  if (outStream != nullptr) *outStream = nullptr;  // dlbridge has no streams of its own
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
