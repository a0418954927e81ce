// Arguments: Python values -> C++ values, raising TypeError for the wrong Python type and
// ValueError for values a rule forbids.
#include "py_internal.h"

namespace dlbpy {
bool ToInt64(PyObject* value, const char* what, int64_t* out) {
  if (!PyLong_Check(value) && !PyIndex_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", what, Py_TYPE(value)->tp_name);
    return false;
  }
  long long v = PyLong_AsLongLong(value);
  if (v == -1 && PyErr_Occurred()) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

bool ToAddress(PyObject* value, const char* what, int64_t* out) {
  if (!PyLong_Check(value) && !PyIndex_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int address, not %.100s", what,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  long long v = PyLong_AsLongLong(value);
  if (v == -1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError) || !PyLong_Check(value)) return false;
    PyErr_Clear();
    unsigned long long u = PyLong_AsUnsignedLongLong(value);
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

const char* ToUtf8(PyObject* value, const char* what) {
  if (!PyUnicode_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(value)->tp_name);
    return nullptr;
  }
  return PyUnicode_AsUTF8(value);
}

bool ToInt64Vector(PyObject* value, const char* what, std::vector<int64_t>* out) {
  PyObject* seq = PySequence_Fast(value, what);
  if (seq == nullptr) {
    PyErr_Format(PyExc_TypeError, "%s must be a sequence of ints, not %.100s", what,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  out->resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!ToInt64(PySequence_Fast_GET_ITEM(seq, i), what, &(*out)[static_cast<size_t>(i)])) {
      Py_DECREF(seq);
      return false;
    }
  }
  Py_DECREF(seq);
  return true;
}

PyObject* Int64Tuple(const int64_t* values, size_t n) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(n));
  if (tuple == nullptr) return nullptr;
  for (size_t i = 0; i < n; ++i) {
    PyObject* item = PyLong_FromLongLong(values[i]);
    if (item == nullptr) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), item);
  }
  return tuple;
}

// The dtype of Tensor(...) (see PY-4): the core's names (ParseDtype), or a tuple.
bool ToDtype(PyObject* value, DLDataType* out) {
  if (PyUnicode_Check(value)) {
    Py_ssize_t size = 0;
    const char* name = PyUnicode_AsUTF8AndSize(value, &size);
    if (name == nullptr) return false;
    try {
      *out = dlbridge::ParseDtype(std::string_view(name, static_cast<size_t>(size)));
      return true;
    } catch (const dlbridge::Error& e) {
      SetError(
          dlbridge::Error(e.code(), std::string(e.what()) + "; or a tuple (code, bits, lanes)"));
    } catch (...) {
      SetCurrentException();
    }
    return false;
  }
  if (PyTuple_Check(value) && (PyTuple_GET_SIZE(value) == 2 || PyTuple_GET_SIZE(value) == 3)) {
    long long parts[3] = {0, 0, 1};
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); ++i) {
      PyObject* item = PyTuple_GET_ITEM(value, i);
      if (!PyLong_Check(item)) goto bad;
      parts[i] = PyLong_AsLongLong(item);
      if (parts[i] == -1 && PyErr_Occurred()) return false;
    }
    if (parts[0] < 0 || parts[0] > 255 || parts[1] < 0 || parts[1] > 255 || parts[2] < 0 ||
        parts[2] > 65535) {
      PyErr_SetString(
          PyExc_ValueError,
          "dtype tuple out of range: code and bits must be in 0..255, lanes in 0..65535");
      return false;
    }
    out->code = static_cast<uint8_t>(parts[0]);
    out->bits = static_cast<uint8_t>(parts[1]);
    out->lanes = static_cast<uint16_t>(parts[2]);
    return true;
  }
bad:
  PyErr_Format(PyExc_TypeError, "dtype must be a str or a tuple (code, bits, lanes), not %.100R",
               value);
  return false;
}

}  // namespace dlbpy
