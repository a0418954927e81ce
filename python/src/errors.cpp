// Errors: a dlbridge::Error becomes the Python exception spec/python.md names for its code,
// with the core's message and the code's name as `code`; other C++ exceptions map as below.
// Also the device lists the module's own messages name, from the core's device table.
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

namespace {

// One piece of the core's C++ advice, in the messages of one error code, and what a Python caller
// does instead. Keyed by code, so a phrase is rewritten only where the core uses it; a test
// (test_py42_every_advice_entry_attaches) raises each code and checks that its advice attaches,
// so a reworded core message cannot silently lose its Python advice.
struct Advice {
  ErrorCode code;
  const char* cpp;
  const char* python;
};
// Per code, longer phrases first, so a shorter one never rewrites part of a longer one.
constexpr Advice kAdvice[] = {
    {ErrorCode::kReadOnly, "use ToDLPackVersioned",
     "ask with max_version=(1, 0) for a versioned capsule"},
    {ErrorCode::kInvalidFlags, "use ToDLPackVersioned",
     "ask with max_version=(1, 0) for a versioned capsule"},
    {ErrorCode::kInvalidFlags, "Tensor::flags", "Tensor.flags"},
    {ErrorCode::kMissingDeviceId, "Tensor::device or ExportOptions::device_id",
     "dlbridge.Tensor(..., device=(type, id))"},
    {ErrorCode::kMissingDeviceId, "set Tensor::device (e.g. {", "pass device=("},
    {ErrorCode::kMissingDeviceId, "}) or ExportOptions::device_id", ") to dlbridge.Tensor"},
    {ErrorCode::kDeviceMismatch, "Tensor::device", "dlbridge.Tensor's device"},
    // A GPU runtime's own message (a failed pointer query or stream order) says the same.
    {ErrorCode::kRuntimeUnavailable, "Tensor::device or ExportOptions::device_id",
     "dlbridge.Tensor(..., device=(type, id))"},
    {ErrorCode::kNoDevice, "Tensor::device or ExportOptions::device_id",
     "dlbridge.Tensor(..., device=(type, id))"},
    {ErrorCode::kRuntimeNotInitialized, "Tensor::device or ExportOptions::device_id",
     "dlbridge.Tensor(..., device=(type, id))"},
    {ErrorCode::kStubLibrary, "Tensor::device or ExportOptions::device_id",
     "dlbridge.Tensor(..., device=(type, id))"},
};

}  // namespace

// PY-42: the one place where the core's C++ advice becomes Python advice.
std::string PythonMessage(const dlbridge::Error& error) {
  std::string text = error.what();
  for (const Advice& advice : kAdvice) {
    if (advice.code != error.code()) continue;
    const size_t cppSize = std::strlen(advice.cpp);
    for (size_t at = text.find(advice.cpp); at != std::string::npos;
         at = text.find(advice.cpp, at + std::strlen(advice.python))) {
      text.replace(at, cppSize, advice.python);
    }
  }
  return text;
}

PyObject* PythonAdviceList(PyObject*, PyObject*) {
  constexpr Py_ssize_t kCount = sizeof(kAdvice) / sizeof(kAdvice[0]);
  PyObject* list = PyList_New(kCount);
  if (list == nullptr) return nullptr;
  for (Py_ssize_t i = 0; i < kCount; ++i) {
    PyObject* row = Py_BuildValue("(sss)", dlbridge::ErrorCodeName(kAdvice[i].code), kAdvice[i].cpp,
                                  kAdvice[i].python);
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, row);
  }
  return list;
}

void SetError(const dlbridge::Error& e) {
  PyObject* type = ExceptionFor(e.code());
  PyObject* message = PyUnicode_FromString(PythonMessage(e).c_str());
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
