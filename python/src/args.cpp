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

namespace {

// One item of ToIntPairSlow: an int, anything with __index__, or an enum.Enum whose value is an
// int (the array API writes dl_device as (Enum, int)).
bool IndexOf(PyObject* item, long long* out) {
  PyObject* number = nullptr;
  if (PyLong_Check(item) || PyIndex_Check(item)) {
    number = PyNumber_Index(item);
  } else if (g_enum_type != nullptr &&
             PyObject_TypeCheck(item, reinterpret_cast<PyTypeObject*>(g_enum_type))) {
    PyObject* value = PyObject_GetAttr(item, g_str_value);
    if (value == nullptr) return false;
    if (PyLong_Check(value)) {
      number = PyNumber_Index(value);
    }
    Py_DECREF(value);
    if (number == nullptr && !PyErr_Occurred()) return false;
  } else {
    return false;
  }
  if (number == nullptr) return false;
  *out = PyLong_AsLongLong(number);
  Py_DECREF(number);
  return !(*out == -1 && PyErr_Occurred());
}

}  // namespace

// PY-43: the slow path of ToIntPair, after its exact-int fast path.
bool ToIntPairSlow(PyObject* value, const char* what, int64_t* first, int64_t* second) {
  long long items[2] = {0, 0};
  if (PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 2) {
    bool ok = true;
    for (Py_ssize_t i = 0; i < 2 && ok; ++i) ok = IndexOf(PyTuple_GET_ITEM(value, i), &items[i]);
    if (ok) {
      *first = items[0];
      *second = items[1];
      return true;
    }
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_TypeError)) return false;  // overflow
    PyErr_Clear();
  }
  // Only the pair's own form: a caller that also takes None has handled it already, and one
  // that does not (current_stream's device) must not be told it may pass None.
  PyErr_Format(PyExc_TypeError,
               "%s must be a tuple of two integers (ints, objects with __index__ such as NumPy "
               "integers, or enum members with an int value), not %.100R",
               what, value);
  return false;
}

namespace {

// PY-64: the device names users type, each by the memory space whose device it names; the
// device type is the device table's (DefaultDeviceType: the type the space exports as), so
// "rocm" and "hip" (ROCm's runtime, dlbridge's "hip" space) both name ROCm's. A name without
// ":N" means ordinal 0 (dlbridge keeps no current device).
struct DeviceName {
  const char* name;
  dlbridge::MemorySpace space;
};
constexpr DeviceName kDeviceNames[] = {{"cpu", dlbridge::MemorySpace::kHost},
                                       {"cuda", dlbridge::MemorySpace::kCuda},
                                       {"rocm", dlbridge::MemorySpace::kHip},
                                       {"hip", dlbridge::MemorySpace::kHip}};
constexpr const char* kDeviceForms =
    "'cpu', 'cuda', 'cuda:N', 'rocm', 'rocm:N', 'hip', 'hip:N' (N a device ordinal; no ':N' "
    "means 0), a torch.device, or a (device_type, device_id) pair of integers such as "
    "(kDLCUDA, 0) = (2, 0)";

// A device name and an optional ordinal ("cuda", "cuda:1"; `index` None or an int for a
// torch.device's .index). False with the exception set, naming `given` (the argument).
bool NamedDevice(std::string_view text, PyObject* index, const char* what, PyObject* given,
                 DLDevice* out) {
  std::string_view name = text;
  long long ordinal = 0;
  bool bad = false;
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    name = text.substr(0, colon);
    const std::string_view digits = text.substr(colon + 1);
    bad = digits.empty() || digits.size() > 10;
    for (char c : digits) bad = bad || c < '0' || c > '9';
    if (!bad) ordinal = std::stoll(std::string(digits));
  }
  if (index != nullptr && index != Py_None) {
    if (!PyLong_Check(index)) {
      PyErr_Format(PyExc_TypeError, "%s: %.100R has an .index that is not an int or None", what,
                   given);
      return false;
    }
    ordinal = PyLong_AsLongLong(index);
    if (ordinal == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      bad = true;
    }
  }
  const DeviceName* found = nullptr;
  for (const DeviceName& row : kDeviceNames) {
    if (name == row.name) found = &row;
  }
  const DLDeviceType type =
      found != nullptr ? dlbridge::DefaultDeviceType(found->space) : DLDeviceType{};
  const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(type);
  if (found == nullptr || bad || ordinal < 0 || ordinal > INT32_MAX ||
      (row != nullptr && row->id_is_zero && ordinal != 0)) {
    PyErr_Format(PyExc_ValueError, "%s: %.100R is not a device dlbridge knows; pass %s", what,
                 given, kDeviceForms);
    return false;
  }
  *out = DLDevice{type, static_cast<int32_t>(ordinal)};
  return true;
}

}  // namespace

// PY-64: every device argument of the module is read here (ToDevice's slow path).
bool ToDeviceSlow(PyObject* value, const char* what, DLDevice* out) {
  if (PyUnicode_Check(value)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(value, &size);
    if (text == nullptr) return false;
    return NamedDevice(std::string_view(text, static_cast<size_t>(size)), nullptr, what, value,
                       out);
  }
  if (!PyTuple_Check(value)) {
    // A torch.device (duck-typed, torch is never imported): a str .type and an .index.
    PyObject* type = PyObject_GetAttrString(value, "type");
    if (type == nullptr) PyErr_Clear();
    PyObject* index = type != nullptr ? PyObject_GetAttrString(value, "index") : nullptr;
    if (type != nullptr && index == nullptr) PyErr_Clear();
    if (type != nullptr && index != nullptr && PyUnicode_Check(type)) {
      const char* name = PyUnicode_AsUTF8(type);
      const bool ok = name != nullptr && NamedDevice(name, index, what, value, out);
      Py_DECREF(type);
      Py_DECREF(index);
      return ok;
    }
    Py_XDECREF(type);
    Py_XDECREF(index);
    PyErr_Format(PyExc_TypeError, "%s must be a device: %s; not %.100R", what, kDeviceForms, value);
    return false;
  }
  int64_t type = 0;
  int64_t id = 0;
  bool beyond64 = false;  // an item beyond 64 bits is out of range as one beyond 32 bits is
  if (!ToIntPair(value, what, &type, &id)) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return false;
    PyErr_Clear();
    beyond64 = true;
  }
  if (beyond64 || type < 0 || type > INT32_MAX || id < INT32_MIN || id > INT32_MAX) {
    PyErr_Format(PyExc_ValueError,
                 "%s %R is out of range; it is (device_type, device_id) with 32-bit values, "
                 "e.g. (kDLCPU, 0) = (1, 0)",
                 what, value);
    return false;
  }
  // A type whose id is always 0 (the device table's id_is_zero: kDLCPU, pinned and managed
  // memory) names no device with another id: refused here, naming the argument.
  const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(static_cast<DLDeviceType>(type));
  if (row != nullptr && row->id_is_zero && id != 0) {
    PyErr_Format(PyExc_ValueError,
                 "%s %R is not a device: %s has device_id 0 only, i.e. (%s, 0) = (%d, 0)", what,
                 value, row->name, row->name, static_cast<int>(type));
    return false;
  }
  *out = DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)};
  return true;
}

namespace {

// The name ParseDtype reads for a NumPy dtype or scalar type (np.dtype("int16"), np.float32)
// or a torch dtype (torch.float32), or an empty string when `value` is none of them. NumPy and
// torch are not imported here: an object of theirs exists only when they are loaded.
bool FrameworkDtypeName(PyObject* value, std::string* name) {
  PyObject* modules = PyImport_GetModuleDict();  // borrowed
  PyObject* numpy = PyDict_GetItemString(modules, "numpy");
  if (numpy != nullptr) {
    PyObject* dtypeType = PyObject_GetAttrString(numpy, "dtype");
    if (dtypeType == nullptr) return false;
    PyObject* dtype = nullptr;
    const bool isDtype = PyObject_IsInstance(value, dtypeType) == 1;
    const bool isScalarType = !isDtype && PyType_Check(value);
    if (isDtype) {
      Py_INCREF(value);
      dtype = value;
    } else if (isScalarType) {
      PyObject* generic = PyObject_GetAttrString(numpy, "generic");
      if (generic != nullptr && PyObject_IsSubclass(value, generic) == 1) {
        dtype = PyObject_CallOneArg(dtypeType, value);
      }
      Py_XDECREF(generic);
      if (dtype == nullptr && PyErr_Occurred()) {
        Py_DECREF(dtypeType);
        return false;
      }
    }
    Py_DECREF(dtypeType);
    if (dtype != nullptr) {
      PyObject* native = PyObject_GetAttrString(dtype, "isnative");
      PyObject* text = PyObject_GetAttrString(dtype, "name");
      const bool ok = native != nullptr && text != nullptr && PyUnicode_Check(text);
      if (ok && PyObject_IsTrue(native) != 1) {
        PyErr_Format(PyExc_ValueError,
                     "dtype %R is not in the machine's byte order; DLPack describes native "
                     "data only (use .newbyteorder('=') on a byte-swapped copy)",
                     dtype);
      } else if (ok) {
        *name = PyUnicode_AsUTF8(text);
      }
      Py_XDECREF(native);
      Py_XDECREF(text);
      Py_DECREF(dtype);
      return ok && !PyErr_Occurred();
    }
  }
  PyObject* torch = PyDict_GetItemString(modules, "torch");
  if (torch != nullptr) {
    PyObject* dtypeType = PyObject_GetAttrString(torch, "dtype");
    if (dtypeType == nullptr) return false;
    const int isDtype = PyObject_IsInstance(value, dtypeType);
    Py_DECREF(dtypeType);
    if (isDtype < 0) return false;
    if (isDtype == 1) {
      PyObject* text = PyObject_Str(value);  // "torch.float32"
      if (text == nullptr) return false;
      std::string_view full = PyUnicode_AsUTF8(text);
      if (full.substr(0, 6) == "torch.") full.remove_prefix(6);
      *name = std::string(full);
      Py_DECREF(text);
      return true;
    }
  }
  return true;  // not a framework's dtype: *name stays empty
}

bool ParseDtypeName(std::string_view name, DLDataType* out) {
  try {
    *out = dlbridge::ParseDtype(name);
    return true;
  } catch (const dlbridge::Error& e) {
    SetError(dlbridge::Error(
        e.code(), std::string(e.what()) +
                      "; or a NumPy/torch dtype of one of them, or a tuple (code, bits, lanes)"));
  } catch (...) {
    SetCurrentException();
  }
  return false;
}

}  // namespace

// The dtype of Tensor(...) (see PY-4): the core's names (ParseDtype), or a tuple; PY-39: or
// a NumPy dtype / scalar type or a torch dtype, by its name.
bool ToDtype(PyObject* value, DLDataType* out) {
  if (!PyUnicode_Check(value) && !PyTuple_Check(value)) {
    std::string name;
    if (!FrameworkDtypeName(value, &name)) return false;
    if (!name.empty()) return ParseDtypeName(name, out);
  }
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
  PyErr_Format(PyExc_TypeError,
               "dtype must be a str, a NumPy or torch dtype, or a tuple (code, bits, lanes), not "
               "%.100R",
               value);
  return false;
}

}  // namespace dlbpy
