// Errors: a dlbridge::Error becomes the Python exception spec/python.md names for its code,
// with the core's message and the code's name as `code`; other C++ exceptions map as below.
#include "py_internal.h"
// after py_internal.h, which includes Python.h as the module needs it
#include "dlbridge/python.h"

namespace dlbpy {

using dlbridge::ErrorCode;

// The table is dlbridge/python.h's (see PYH-1), so C++ extensions built on that header raise
// the classes this module raises.
PyObject* ExceptionFor(dlbridge::ErrorCode code) {
  return dlbridge::python::ExceptionTypeFor(code);
}

// PY-42: the one place where the core's C++ advice becomes Python advice. Each pair is a phrase
// the core's messages use and what a Python caller does instead; longer phrases first, so a
// shorter one never rewrites part of a longer one.
std::string PythonMessage(const char* message) {
  static const std::pair<const char*, const char*> kAdvice[] = {
      {"use ToDLPackVersioned", "ask with max_version=(1, 0) for a versioned capsule"},
      {"Tensor::device or ExportOptions::device_id", "dlbridge.Tensor(..., device=(type, id))"},
      {"set Tensor::device (e.g. {", "pass device=("},
      {"}) or ExportOptions::device_id", ") to dlbridge.Tensor"},
      {"leave Tensor::device unset", "pass device=None to dlbridge.Tensor"},
      {"Tensor::device", "dlbridge.Tensor's device"},
      {"ExportOptions::device_id", "dlbridge.Tensor's device id"},
      {"Tensor::flags", "Tensor.flags"},
  };
  std::string text = message;
  for (const auto& [cpp, python] : kAdvice) {
    const size_t cppSize = std::strlen(cpp);
    for (size_t at = text.find(cpp); at != std::string::npos;
         at = text.find(cpp, at + std::strlen(python))) {
      text.replace(at, cppSize, python);
    }
  }
  return text;
}

void SetError(const dlbridge::Error& e) {
  PyObject* type = ExceptionFor(e.code());
  PyObject* message = PyUnicode_FromString(PythonMessage(e.what()).c_str());
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
