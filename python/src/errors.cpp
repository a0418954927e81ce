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

// The Python wording of each advice the core gives as a value (dlbridge::ErrorAdvice); the C++
// wording is the core's (ErrorAdviceText). Nothing here reads the core's message text, so a
// reworded core message keeps its Python advice.
std::string PythonAdviceText(dlbridge::ErrorAdvice advice, const std::string& detail) {
  switch (advice) {
    case dlbridge::ErrorAdvice::kNone: return std::string();
    case dlbridge::ErrorAdvice::kUseVersioned:
      return "; ask with max_version=(1, 0) for a versioned capsule";
    case dlbridge::ErrorAdvice::kGiveDeviceId:
      return "; pass device=(" + (detail.empty() ? std::string("type") : detail) +
             ", 0) to dlbridge.Tensor";
  }
  return std::string();
}

constexpr dlbridge::ErrorAdvice kEveryAdvice[] = {dlbridge::ErrorAdvice::kUseVersioned,
                                                  dlbridge::ErrorAdvice::kGiveDeviceId};

}  // namespace

// PY-42: the one place where an error's advice is worded for Python: the core's reason (its
// message without the advice) and the advice the error carries as a value.
std::string PythonMessage(const dlbridge::Error& error) {
  return error.reason() + PythonAdviceText(error.advice(), error.advice_detail());
}

PyObject* PythonAdviceList(PyObject*, PyObject*) {
  constexpr Py_ssize_t kCount = sizeof(kEveryAdvice) / sizeof(kEveryAdvice[0]);
  PyObject* list = PyList_New(kCount);
  if (list == nullptr) return nullptr;
  const std::string detail = "kDLCUDA";  // an example of kGiveDeviceId's detail
  for (Py_ssize_t i = 0; i < kCount; ++i) {
    const dlbridge::ErrorAdvice advice = kEveryAdvice[i];
    PyObject* row = Py_BuildValue("(sss)", dlbridge::ErrorAdviceName(advice),
                                  dlbridge::ErrorAdviceText(advice, detail).c_str(),
                                  PythonAdviceText(advice, detail).c_str());
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, row);
  }
  return list;
}

PyObject* RaiseError(PyObject*, PyObject* args) {
  int code = 0;
  int advice = 0;
  const char* reason = nullptr;
  const char* detail = nullptr;
  if (!PyArg_ParseTuple(args, "isis", &code, &reason, &advice, &detail)) return nullptr;
  SetError(dlbridge::Error(static_cast<ErrorCode>(code), reason,
                           static_cast<dlbridge::ErrorAdvice>(advice), detail));
  return nullptr;
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
  // The advice as a value too (its name, or None), for callers that act on it.
  PyObject* advice = Py_None;
  if (e.advice() == dlbridge::ErrorAdvice::kNone) {
    Py_INCREF(advice);
  } else {
    advice = PyUnicode_FromString(dlbridge::ErrorAdviceName(e.advice()));
  }
  if (advice == nullptr || PyObject_SetAttrString(exc, "advice", advice) != 0) PyErr_Clear();
  Py_XDECREF(advice);
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
