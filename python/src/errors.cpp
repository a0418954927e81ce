// Errors: a dlbridge::Error becomes the Python exception spec/python.md names for its code,
// with the core's message and the code's name as `code`; other C++ exceptions map as below.
#include "py_internal.h"

namespace dlbpy {

using dlbridge::ErrorCode;

PyObject* ExceptionFor(dlbridge::ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnsupportedVersion:
    case ErrorCode::kUnsupportedDevice:
    case ErrorCode::kDeviceMismatch:
    case ErrorCode::kMissingDeviceId:
    case ErrorCode::kMissingContext:
    case ErrorCode::kReadOnly:
    case ErrorCode::kRuntimeUnavailable:
    case ErrorCode::kNoHold: return PyExc_BufferError;  // the data cannot be exchanged as asked
    case ErrorCode::kOutOfMemory: return PyExc_MemoryError;
    default: return PyExc_ValueError;  // malformed values: layout, dtype, flags, descriptor, ...
  }
}

void SetError(const dlbridge::Error& e) {
  PyObject* type = ExceptionFor(e.code());
  PyObject* message = PyUnicode_FromString(e.what());
  if (message == nullptr) return;
  PyObject* exc = PyObject_CallOneArg(type, message);
  Py_DECREF(message);
  if (exc == nullptr) return;
  PyObject* code = PyUnicode_FromString(dlbridge::ErrorCodeName(e.code()));
  if (code == nullptr || PyObject_SetAttr(exc, g_str_code, code) != 0) PyErr_Clear();
  Py_XDECREF(code);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

void SetCurrentException() {
  try {
    throw;
  } catch (const dlbridge::Error& e) {
    SetError(e);
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "dlbridge: unknown C++ exception");
  }
}

}  // namespace dlbpy
