// The `dlbridge` Python module, written against the CPython C API directly (no binding
// library), so that the DLPack exchange paths cost about what NumPy's own do.
//
// What it provides (spec/python.md gives every rule with its test):
//   dlbridge.MemoryDescriptor  the seed's descriptor API, plus SetOwner(obj) for Python owners
//   dlbridge.Tensor            descriptor + layout; __dlpack__, __dlpack_device__ and the
//                              DLPack 1.3 C exchange API (__dlpack_c_exchange_api__)
//   dlbridge.from_dlpack(obj)  imports any DLPack producer or capsule into a dlbridge.Tensor
//
// Threads and finalisation: every release dlbridge installs that drops a Python reference
// takes the GIL with PyGILState_Ensure, so it may run on any thread; once the interpreter
// is no longer initialised (Py_IsInitialized() == 0) it deliberately leaks the reference
// instead, because touching a finalised interpreter is undefined.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlbridge/dlbridge.h"

#if DLPACK_MAJOR_VERSION == 1 && DLPACK_MINOR_VERSION >= 3
#define DLBRIDGE_PY_EXCHANGE_API 1
#else
#define DLBRIDGE_PY_EXCHANGE_API 0
#endif

namespace {

using dlbridge::ErrorCode;

constexpr const char kLegacyName[] = "dltensor";
constexpr const char kVersionedName[] = "dltensor_versioned";
constexpr const char kUsedLegacyName[] = "used_dltensor";
constexpr const char kUsedVersionedName[] = "used_dltensor_versioned";
constexpr const char kExchangeApiName[] = "dlpack_exchange_api";

// Interned strings and constant objects, created once at import.
PyObject* g_str_dlpack = nullptr;        // "__dlpack__"
PyObject* g_str_exchange_api = nullptr;  // "__dlpack_c_exchange_api__"
PyObject* g_str_stream = nullptr;
PyObject* g_str_max_version = nullptr;
PyObject* g_str_dl_device = nullptr;
PyObject* g_str_copy = nullptr;
PyObject* g_str_code = nullptr;
PyObject* g_kwnames_max_version = nullptr;  // ("max_version",)
PyObject* g_max_version = nullptr;          // (1, DLPACK_MINOR_VERSION)

PyTypeObject* g_descriptor_type = nullptr;
PyTypeObject* g_tensor_type = nullptr;

// ---------------------------------------------------------------------------------------
// Errors

PyObject* ExceptionFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnsupportedVersion:
    case ErrorCode::kUnsupportedDevice:
    case ErrorCode::kDeviceMismatch:
    case ErrorCode::kMissingDeviceId:
    case ErrorCode::kMissingContext:
    case ErrorCode::kReadOnly:
    case ErrorCode::kRuntimeUnavailable:
      return PyExc_BufferError;  // the data cannot be exchanged as asked
    case ErrorCode::kOutOfMemory: return PyExc_MemoryError;
    default: return PyExc_ValueError;  // malformed values: layout, dtype, flags, descriptor, ...
  }
}

// Sets the Python exception for a dlbridge::Error: the message unchanged, and the
// ErrorCode's name as the exception's `code` attribute.
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

// Converts whatever a C++ call threw into the Python exception.
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

#define DLB_TRY try {
#define DLB_CATCH(result)  \
  }                        \
  catch (...) {            \
    SetCurrentException(); \
    return result;         \
  }

// ---------------------------------------------------------------------------------------
// Python references held from C++: releases that may run on any thread, or after the end.

void DecRefAnyThread(PyObject* object) noexcept {
  if (!Py_IsInitialized()) return;  // the interpreter is gone (or going): leak on purpose
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(object);
  PyGILState_Release(state);
}

// The deleter of owner references made by MemoryDescriptor.SetOwner(obj).
struct PyOwnerDeleter {
  void operator()(const void* object) const noexcept {
    DecRefAnyThread(static_cast<PyObject*>(const_cast<void*>(object)));
  }
};

// ---------------------------------------------------------------------------------------
// Argument helpers

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

// An address: any int in [INT64_MIN, UINT64_MAX] (values above INT64_MAX wrap, as C would).
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

// A tuple of exactly two ints.
bool ToIntPair(PyObject* value, const char* what, int64_t* first, int64_t* second) {
  if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2 ||
      !PyLong_Check(PyTuple_GET_ITEM(value, 0)) || !PyLong_Check(PyTuple_GET_ITEM(value, 1))) {
    PyErr_Format(PyExc_TypeError, "%s must be None or a tuple of two ints, not %.100R", what,
                 value);
    return false;
  }
  long long a = PyLong_AsLongLong(PyTuple_GET_ITEM(value, 0));
  if (a == -1 && PyErr_Occurred()) return false;
  long long b = PyLong_AsLongLong(PyTuple_GET_ITEM(value, 1));
  if (b == -1 && PyErr_Occurred()) return false;
  *first = a;
  *second = b;
  return true;
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

// A dtype: a name the core's ParseDtype accepts ("float32", "bool", "float32x4", ...), or a
// tuple (code, bits[, lanes]).
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

// ---------------------------------------------------------------------------------------
// dlbridge.MemoryDescriptor

struct PyDescriptor {
  PyObject_HEAD dlbridge::MemoryDescriptor own;  // used when this object owns its descriptor
  dlbridge::MemoryDescriptor* d;                 // &own, or the descriptor inside `base`
  PyObject* base;                                // the dlbridge.Tensor viewed, or null
};

// The core's ExportPlans of one dlbridge.Tensor, one per kind, each prepared at the first
// export of its kind and emitted from until the description changes (descriptor setters
// through Tensor.descriptor, Tensor.flags: Invalidate); the layout never changes. Out of line
// (one pymalloc block, made at the first export), so that a Tensor stays a pymalloc object.
struct ExportPlans {
  std::optional<dlbridge::ExportPlan> versioned;  // ToDLPackVersioned's checks passed
  std::optional<dlbridge::ExportPlan> legacy;     // ToDLPack's checks passed
};

struct PyTensor {
  PyObject_HEAD dlbridge::Tensor t;
  ExportPlans* plans;  // null until the first export
};

PyDescriptor* AsDescriptor(PyObject* self) { return reinterpret_cast<PyDescriptor*>(self); }
PyTensor* AsTensor(PyObject* self) { return reinterpret_cast<PyTensor*>(self); }

// The tensor's description changed: its exports are prepared again.
void Invalidate(PyTensor* tensor) noexcept {
  if (tensor->plans == nullptr) return;
  tensor->plans->versioned.reset();
  tensor->plans->legacy.reset();
}

// The descriptor is about to change: a tensor it belongs to must check its exports again.
dlbridge::MemoryDescriptor* Mutable(PyObject* self) {
  PyDescriptor* d = AsDescriptor(self);
  if (d->base != nullptr) Invalidate(AsTensor(d->base));
  return d->d;
}

// The tensor's plans, prepared on first use (throws the core's Error when the tensor cannot
// be exported so).
ExportPlans& PlansOf(PyTensor* tensor) {
  if (tensor->plans == nullptr) {
    void* memory = PyMem_Malloc(sizeof(ExportPlans));
    if (memory == nullptr) throw std::bad_alloc();
    tensor->plans = new (memory) ExportPlans();
  }
  return *tensor->plans;
}

const dlbridge::ExportPlan& VersionedPlan(PyTensor* tensor) {
  if (tensor->plans != nullptr && tensor->plans->versioned) return *tensor->plans->versioned;
  return PlansOf(tensor).versioned.emplace(tensor->t, dlbridge::ExportKind::kVersioned);
}

const dlbridge::ExportPlan& LegacyPlan(PyTensor* tensor) {
  if (tensor->plans != nullptr && tensor->plans->legacy) return *tensor->plans->legacy;
  return PlansOf(tensor).legacy.emplace(tensor->t, dlbridge::ExportKind::kLegacy);
}

PyObject* DescriptorNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* pointer = nullptr;
  PyObject* size = nullptr;
  const char* space = "host";
  const char* role = "data";
  static const char* keywords[] = {"pointer", "size_in_bytes", "memory_space", "role", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOss:MemoryDescriptor",
                                   const_cast<char**>(keywords), &pointer, &size, &space, &role)) {
    return nullptr;
  }
  int64_t p = 0;
  int64_t n = 0;
  if (pointer != nullptr && !ToAddress(pointer, "pointer", &p)) return nullptr;
  if (size != nullptr && !ToInt64(size, "size_in_bytes", &n)) return nullptr;
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  PyDescriptor* d = AsDescriptor(self);
  new (&d->own) dlbridge::MemoryDescriptor();
  d->d = &d->own;
  d->base = nullptr;
  DLB_TRY
  if (pointer != nullptr || size != nullptr || std::strcmp(space, "host") != 0 ||
      std::strcmp(role, "data") != 0) {
    d->d->Set(p, n, space, role);
  }
  DLB_CATCH((Py_DECREF(self), nullptr))
  return self;
}

void DescriptorDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyDescriptor* d = AsDescriptor(self);
  d->own.~MemoryDescriptor();  // drops this object's own hold, if any
  Py_CLEAR(d->base);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* DescriptorView(PyObject* tensor) {
  PyObject* self = g_descriptor_type->tp_alloc(g_descriptor_type, 0);
  if (self == nullptr) return nullptr;
  PyDescriptor* d = AsDescriptor(self);
  new (&d->own) dlbridge::MemoryDescriptor();
  d->d = &AsTensor(tensor)->t.descriptor;
  Py_INCREF(tensor);
  d->base = tensor;
  return self;
}

PyObject* DescSet(PyObject* self, PyObject* args, PyObject* kwargs) {
  PyObject* pointer = nullptr;
  PyObject* size = nullptr;
  const char* space = nullptr;
  const char* role = "data";
  static const char* keywords[] = {"pointer", "size_in_bytes", "memory_space", "role", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOs|s:Set", const_cast<char**>(keywords),
                                   &pointer, &size, &space, &role)) {
    return nullptr;
  }
  int64_t p = 0;
  int64_t n = 0;
  if (!ToAddress(pointer, "pointer", &p) || !ToInt64(size, "size_in_bytes", &n)) return nullptr;
  DLB_TRY
  Mutable(self)->Set(p, n, space, role);
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescSetPointer(PyObject* self, PyObject* value) {
  int64_t p = 0;
  if (!ToAddress(value, "pointer", &p)) return nullptr;
  DLB_TRY
  Mutable(self)->SetPointer(p);
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescGetPointer(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetPointer());
}

PyObject* DescSetSize(PyObject* self, PyObject* value) {
  int64_t n = 0;
  if (!ToInt64(value, "size_in_bytes", &n)) return nullptr;
  DLB_TRY
  Mutable(self)->SetSizeInBytes(n);
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescGetSize(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetSizeInBytes());
}

PyObject* DescSetSpace(PyObject* self, PyObject* value) {
  const char* space = ToUtf8(value, "memory_space");
  if (space == nullptr) return nullptr;
  DLB_TRY
  Mutable(self)->SetMemorySpace(space);
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescGetSpace(PyObject* self, PyObject*) {
  return PyUnicode_FromString(AsDescriptor(self)->d->GetMemorySpace());
}

PyObject* DescSetRole(PyObject* self, PyObject* value) {
  const char* role = ToUtf8(value, "role");
  if (role == nullptr) return nullptr;
  DLB_TRY
  AsDescriptor(self)->d->SetRole(role);
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescGetRole(PyObject* self, PyObject*) {
  return PyUnicode_FromString(AsDescriptor(self)->d->GetRole());
}

PyObject* DescSetReleaseAddress(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_SetString(PyExc_TypeError, "SetReleaseAddress(release, context) takes two ints");
    return nullptr;
  }
  int64_t release = 0;
  int64_t context = 0;
  if (!ToAddress(args[0], "release", &release) || !ToAddress(args[1], "context", &context)) {
    return nullptr;
  }
  AsDescriptor(self)->d->SetReleaseAddress(release, context);
  Py_RETURN_NONE;
}

PyObject* DescGetReleaseAddress(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetReleaseAddress());
}

PyObject* DescGetReleaseContextAddress(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetReleaseContextAddress());
}

PyObject* DescSetOwner(PyObject* self, PyObject* owner) {
  DLB_TRY
  if (owner == Py_None) {
    AsDescriptor(self)->d->SetOwner(nullptr);
  } else {
    Py_INCREF(owner);  // on bad_alloc, shared_ptr's constructor runs the deleter (a DECREF)
    AsDescriptor(self)->d->SetOwner(std::shared_ptr<const void>(owner, PyOwnerDeleter{}));
  }
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

PyObject* DescGetOwner(PyObject* self, PyObject*) {
  std::shared_ptr<const void> owner = AsDescriptor(self)->d->GetOwner();
  if (owner && std::get_deleter<PyOwnerDeleter>(owner) != nullptr) {
    PyObject* object = static_cast<PyObject*>(const_cast<void*>(owner.get()));
    Py_INCREF(object);
    return object;
  }
  Py_RETURN_NONE;
}

PyObject* DescHasOwnership(PyObject* self, PyObject*) {
  return PyBool_FromLong(AsDescriptor(self)->d->HasOwnership() ? 1 : 0);
}

PyObject* DescTakeRelease(PyObject* self, PyObject*) {
  dlbridge::ReleaseFunction release = nullptr;
  void* context = nullptr;
  DLB_TRY
  AsDescriptor(self)->d->TakeRelease(release, context);
  DLB_CATCH(nullptr)
  PyObject* r = PyLong_FromVoidPtr(reinterpret_cast<void*>(release));
  PyObject* c = r != nullptr ? PyLong_FromVoidPtr(context) : nullptr;
  if (c == nullptr) {
    // The duty has moved to us and cannot be handed over: honour it rather than leak.
    Py_XDECREF(r);
    if (release != nullptr) release(context);
    return nullptr;
  }
  PyObject* pair = PyTuple_Pack(2, r, c);
  Py_DECREF(r);
  Py_DECREF(c);
  if (pair == nullptr && release != nullptr) release(context);
  return pair;
}

PyObject* DescRepr(PyObject* self) {
  const dlbridge::MemoryDescriptor* d = AsDescriptor(self)->d;
  const char* hold = d->GetOwner() ? "owner" : d->GetRelease() != nullptr ? "release" : "none";
  char pointer[32];
  std::snprintf(pointer, sizeof pointer, "0x%llx",
                static_cast<unsigned long long>(d->GetPointer()));
  return PyUnicode_FromFormat(
      "<dlbridge.MemoryDescriptor pointer=%s size=%lld space='%s' role='%s' hold=%s>", pointer,
      static_cast<long long>(d->GetSizeInBytes()), d->GetMemorySpace(), d->GetRole(), hold);
}

#define DLB_METH(fn) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn))

PyMethodDef kDescriptorMethods[] = {
    {"Set", DLB_METH(DescSet), METH_VARARGS | METH_KEYWORDS,
     "Set($self, /, pointer, size_in_bytes, memory_space, role='data')\n--\n\n"
     "The whole description at once; the hold is untouched."},
    {"SetPointer", DLB_METH(DescSetPointer), METH_O,
     "SetPointer($self, pointer, /)\n--\n\nThe buffer's address (an int)."},
    {"GetPointer", DLB_METH(DescGetPointer), METH_NOARGS,
     "GetPointer($self, /)\n--\n\n-> int: the buffer's address."},
    {"SetSizeInBytes", DLB_METH(DescSetSize), METH_O,
     "SetSizeInBytes($self, size_in_bytes, /)\n--\n\nThe buffer's size (an int >= 0)."},
    {"GetSizeInBytes", DLB_METH(DescGetSize), METH_NOARGS,
     "GetSizeInBytes($self, /)\n--\n\n-> int: the buffer's size."},
    {"SetMemorySpace", DLB_METH(DescSetSpace), METH_O,
     "SetMemorySpace($self, memory_space, /)\n--\n\n"
     "memory_space: 'host' | 'cuda' | 'hip' | 'level_zero'"},
    {"GetMemorySpace", DLB_METH(DescGetSpace), METH_NOARGS,
     "GetMemorySpace($self, /)\n--\n\n-> str"},
    {"SetRole", DLB_METH(DescSetRole), METH_O, "SetRole($self, role, /)\n--\n\nrole: str"},
    {"GetRole", DLB_METH(DescGetRole), METH_NOARGS, "GetRole($self, /)\n--\n\n-> str"},
    {"SetReleaseAddress", DLB_METH(DescSetReleaseAddress), METH_FASTCALL,
     "SetReleaseAddress($self, release, context, /)\n--\n\n"
     "Hold the memory with the C function at address "
     "`release` (void (*)(void*)), called once with `context` when the hold is dropped, on "
     "any thread. 0 clears the hold."},
    {"GetReleaseAddress", DLB_METH(DescGetReleaseAddress), METH_NOARGS,
     "GetReleaseAddress($self, /)\n--\n\n-> int (0 unless the hold is a release)"},
    {"GetReleaseContextAddress", DLB_METH(DescGetReleaseContextAddress), METH_NOARGS,
     "GetReleaseContextAddress($self, /)\n--\n\n-> int"},
    {"SetOwner", DLB_METH(DescSetOwner), METH_O,
     "SetOwner($self, obj, /)\n--\n\n"
     "Hold the memory by keeping a strong reference to the Python object `obj` "
     "(None clears the hold). The reference is dropped with the GIL taken, on whichever thread "
     "drops the hold; after interpreter finalisation it is leaked instead."},
    {"GetOwner", DLB_METH(DescGetOwner), METH_NOARGS,
     "GetOwner($self, /)\n--\n\n-> the object given to SetOwner, or None"},
    {"HasOwnership", DLB_METH(DescHasOwnership), METH_NOARGS,
     "HasOwnership($self, /)\n--\n\n-> bool"},
    {"TakeRelease", DLB_METH(DescTakeRelease), METH_NOARGS,
     "TakeRelease($self, /)\n--\n\n"
     "-> (release, context): hands the release duty to the caller, who must call "
     "release(context) exactly once; (0, 0) when nothing is held."},
    {nullptr, nullptr, 0, nullptr},
};

PyType_Slot kDescriptorSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(DescriptorNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(DescriptorDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(DescRepr)},
    {Py_tp_methods, kDescriptorMethods},
    {Py_tp_doc,
     const_cast<char*>(
         "MemoryDescriptor(pointer=0, size_in_bytes=0, memory_space='host', role='data')\n--\n\n"
         "One buffer described with primitive values, and what keeps it alive: a "
         "release (SetReleaseAddress) or a Python owner (SetOwner).")},
    {0, nullptr},
};

PyType_Spec kDescriptorSpec = {"dlbridge.MemoryDescriptor", sizeof(PyDescriptor), 0,
                               Py_TPFLAGS_DEFAULT, kDescriptorSlots};

// ---------------------------------------------------------------------------------------
// dlbridge.Tensor: construction and attributes

PyObject* AllocTensor() {
  PyObject* self = g_tensor_type->tp_alloc(g_tensor_type, 0);
  if (self == nullptr) return nullptr;
  new (&AsTensor(self)->t) dlbridge::Tensor();
  AsTensor(self)->plans = nullptr;
  return self;
}

PyObject* TensorNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* descriptor = nullptr;
  PyObject* dtype = nullptr;
  PyObject* shape = nullptr;
  PyObject* strides = Py_None;
  PyObject* byteOffset = nullptr;
  PyObject* device = Py_None;
  PyObject* flags = nullptr;
  static const char* keywords[] = {"descriptor",  "dtype",  "shape", "strides",
                                   "byte_offset", "device", "flags", nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO|OOOO:Tensor", const_cast<char**>(keywords),
                                   g_descriptor_type, &descriptor, &dtype, &shape, &strides,
                                   &byteOffset, &device, &flags)) {
    return nullptr;
  }
  DLDataType dt{};
  std::vector<int64_t> shapeValues;
  std::vector<int64_t> strideValues;
  int64_t offset = 0;
  int64_t deviceType = 0;
  int64_t deviceId = 0;
  int64_t flagBits = 0;
  if (!ToDtype(dtype, &dt) || !ToInt64Vector(shape, "shape", &shapeValues)) return nullptr;
  if (strides != Py_None && !ToInt64Vector(strides, "strides", &strideValues)) return nullptr;
  if (byteOffset != nullptr && !ToInt64(byteOffset, "byte_offset", &offset)) return nullptr;
  if (device != Py_None && !ToIntPair(device, "device", &deviceType, &deviceId)) return nullptr;
  if (flags != nullptr && !ToInt64(flags, "flags", &flagBits)) return nullptr;
  if (offset < 0) {
    PyErr_Format(PyExc_ValueError, "byte_offset is %lld; it must be >= 0",
                 static_cast<long long>(offset));
    return nullptr;
  }
  if (strides != Py_None && strideValues.size() != shapeValues.size()) {
    PyErr_Format(PyExc_ValueError, "strides has %zd values but shape has %zd",
                 static_cast<Py_ssize_t>(strideValues.size()),
                 static_cast<Py_ssize_t>(shapeValues.size()));
    return nullptr;
  }
  if (deviceType < 0 || deviceType > INT32_MAX || deviceId < INT32_MIN || deviceId > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "device must be (device_type, device_id) with 32-bit values");
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  dlbridge::Tensor& t = AsTensor(self)->t;
  new (&t) dlbridge::Tensor();
  AsTensor(self)->plans = nullptr;
  DLB_TRY
  t.layout = dlbridge::TensorLayout(dt, std::move(shapeValues), std::move(strideValues),
                                    static_cast<uint64_t>(offset));
  t.device.device_type = static_cast<DLDeviceType>(deviceType);
  t.device.device_id = static_cast<int32_t>(deviceId);
  t.flags = static_cast<uint64_t>(flagBits);
  // The hold moves into the tensor; the Python descriptor keeps its description only.
  dlbridge::MemoryDescriptor& source = *Mutable(descriptor);
  std::string role = source.GetRole();
  t.descriptor = std::move(source);
  source.Set(t.descriptor.GetPointer(), t.descriptor.GetSizeInBytes(),
             t.descriptor.GetMemorySpace(), role.c_str());
  t.descriptor.SetRole(role.c_str());
  DLB_CATCH((Py_DECREF(self), nullptr))
  return self;
}

void TensorDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  if (ExportPlans* plans = AsTensor(self)->plans) {
    plans->~ExportPlans();
    PyMem_Free(plans);
  }
  AsTensor(self)->t.~Tensor();  // drops the hold: calls the release or the imported deleter
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* TensorGetDescriptor(PyObject* self, void*) { return DescriptorView(self); }

PyObject* TensorGetDtype(PyObject* self, void*) {
  DLDataType dt = AsTensor(self)->t.layout.Dtype();
  return Py_BuildValue("(iii)", static_cast<int>(dt.code), static_cast<int>(dt.bits),
                       static_cast<int>(dt.lanes));
}

PyObject* TensorGetShape(PyObject* self, void*) {
  dlbridge::IndexSpan s = AsTensor(self)->t.layout.Shape();
  return Int64Tuple(s.data, s.size);
}

PyObject* TensorGetStrides(PyObject* self, void*) {
  dlbridge::IndexSpan s = AsTensor(self)->t.layout.Strides();
  return Int64Tuple(s.data, s.size);
}

PyObject* TensorGetNdim(PyObject* self, void*) {
  return PyLong_FromLong(AsTensor(self)->t.layout.Ndim());
}

PyObject* TensorGetByteOffset(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(AsTensor(self)->t.layout.ByteOffset());
}

PyObject* TensorGetDevice(PyObject* self, void*) {
  const DLDevice& d = AsTensor(self)->t.device;
  return Py_BuildValue("(ii)", static_cast<int>(d.device_type), static_cast<int>(d.device_id));
}

PyObject* TensorGetFlags(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong(AsTensor(self)->t.flags);
}

int TensorSetFlags(PyObject* self, PyObject* value, void*) {
  if (value == nullptr) {
    PyErr_SetString(PyExc_AttributeError, "flags cannot be deleted");
    return -1;
  }
  int64_t flags = 0;
  if (!ToInt64(value, "flags", &flags)) return -1;
  AsTensor(self)->t.flags = static_cast<uint64_t>(flags);
  Invalidate(AsTensor(self));
  return 0;
}

PyObject* TensorGetReadOnly(PyObject* self, void*) {
  return PyBool_FromLong((AsTensor(self)->t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? 1 : 0);
}

PyObject* TensorDlpackDevice(PyObject* self, PyObject*) {
  DLDevice device{};
  DLB_TRY
  device = VersionedPlan(AsTensor(self)).Device();  // the core's answer: what __dlpack__ emits
  DLB_CATCH(nullptr)
  return Py_BuildValue("(ii)", static_cast<int>(device.device_type),
                       static_cast<int>(device.device_id));
}

PyObject* TensorRepr(PyObject* self) {
  const dlbridge::Tensor& t = AsTensor(self)->t;
  PyObject* shape = TensorGetShape(self, nullptr);
  if (shape == nullptr) return nullptr;
  char pointer[32];
  std::snprintf(pointer, sizeof pointer, "0x%llx",
                static_cast<unsigned long long>(t.descriptor.GetPointer()));
  PyObject* repr = PyUnicode_FromFormat(
      "<dlbridge.Tensor dtype=(%d, %d, %d) shape=%R space='%s' pointer=%s flags=%llu>",
      static_cast<int>(t.layout.Dtype().code), static_cast<int>(t.layout.Dtype().bits),
      static_cast<int>(t.layout.Dtype().lanes), shape, t.descriptor.GetMemorySpace(), pointer,
      static_cast<unsigned long long>(t.flags));
  Py_DECREF(shape);
  return repr;
}

// ---------------------------------------------------------------------------------------
// Export

// Zero-copy export of a dlbridge.Tensor. Every emission keeps `self` (the Python object)
// alive, so the tensor's own hold is dropped only once the object and every export are gone;
// it is one pymalloc block (the core's block, from PyMem_Malloc).

// The keep-alive of an emission: the reference to the dlbridge.Tensor (any thread).
void DropTensorRef(void* object) noexcept { DecRefAnyThread(static_cast<PyObject*>(object)); }

// Ends an emission (its deleter may run on any thread, with the GIL or without it): takes the
// GIL once to free the pymalloc block and drop the tensor reference (the keep-alive); after
// interpreter finalisation both are leaked on purpose.
void EndExport(void* block, dlbridge::KeepAlive keepAlive) noexcept {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  PyMem_Free(block);
  Py_XDECREF(static_cast<PyObject*>(keepAlive.context));
  PyGILState_Release(state);
}

constexpr dlbridge::ExportAllocator kPyAllocator{&PyMem_Malloc, &EndExport};

template <class Managed>
Managed* ExportSelf(PyObject* object) {
  PyTensor* self = AsTensor(object);
  const dlbridge::KeepAlive keepAlive{&DropTensorRef, object};
  Managed* m = nullptr;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    m = VersionedPlan(self).EmitVersioned(keepAlive, kPyAllocator);
  } else {
    m = LegacyPlan(self).EmitLegacy(keepAlive, kPyAllocator);
  }
  Py_INCREF(object);  // the emission holds it from here on (its deleter drops it)
  return m;
}

bool IsHostReachable(int32_t deviceType) {
  const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(deviceType);
  return row != nullptr && row->host_addressable;
}

// The array API's stream rules for the device the consumer will use.
bool CheckStream(PyObject* stream, DLDevice device) {
  if (stream == Py_None) return true;
  if (!PyLong_Check(stream) || PyBool_Check(stream)) {
    PyErr_Format(PyExc_TypeError, "__dlpack__: stream must be None or an int, not %.100s",
                 Py_TYPE(stream)->tp_name);
    return false;
  }
  int overflow = 0;
  long long s = PyLong_AsLongLongAndOverflow(stream, &overflow);
  if (s == -1 && PyErr_Occurred()) return false;
  if (overflow > 0) s = 3;  // a pointer-sized value above INT64_MAX: a stream pointer
  if (overflow < 0) s = -2;
  switch (device.device_type) {
    case kDLCPU:
      PyErr_Format(PyExc_ValueError, "__dlpack__: stream must be None for kDLCPU data, not %lld",
                   s);
      return false;
    case kDLCUDA:
    case kDLCUDAHost:
    case kDLCUDAManaged:
      if (s == 0 || s < -1) {
        PyErr_Format(PyExc_ValueError,
                     "__dlpack__: stream %lld is illegal for CUDA; accepted: None (legacy "
                     "default), 1 (legacy), 2 (per-thread), > 2 (a cudaStream_t), -1 (no "
                     "synchronisation)",
                     s);
        return false;
      }
      return true;
    case kDLROCM:
    case kDLROCMHost:
      if (s == 1 || s == 2 || s < -1) {
        PyErr_Format(PyExc_ValueError,
                     "__dlpack__: stream %lld is illegal for ROCm; accepted: None or 0 (default "
                     "stream), > 2 (a hipStream_t), -1 (no synchronisation)",
                     s);
        return false;
      }
      return true;
    default: return true;  // no stream convention defined; dlbridge has no work to order
  }
}

PyObject* NewCapsule(DLManagedTensorVersioned* m);
PyObject* NewCapsule(DLManagedTensor* m);

PyObject* TensorDlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError,
                    "__dlpack__() takes only keyword arguments "
                    "(stream, max_version, dl_device, copy)");
    return nullptr;
  }
  PyObject* stream = Py_None;
  PyObject* maxVersion = Py_None;
  PyObject* dlDevice = Py_None;
  PyObject* copy = Py_None;
  if (kwnames != nullptr) {
    const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, i);
      PyObject* value = args[i];
      if (key == g_str_stream || PyUnicode_Compare(key, g_str_stream) == 0) {
        stream = value;
      } else if (key == g_str_max_version || PyUnicode_Compare(key, g_str_max_version) == 0) {
        maxVersion = value;
      } else if (key == g_str_dl_device || PyUnicode_Compare(key, g_str_dl_device) == 0) {
        dlDevice = value;
      } else if (key == g_str_copy || PyUnicode_Compare(key, g_str_copy) == 0) {
        copy = value;
      } else {
        PyErr_Format(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument %R", key);
        return nullptr;
      }
    }
  }
  bool versioned = false;
  if (maxVersion != Py_None) {
    int64_t major = 0;
    int64_t minor = 0;
    if (!ToIntPair(maxVersion, "__dlpack__: max_version", &major, &minor)) return nullptr;
    versioned = major >= 1;
  }
  if (copy != Py_None && !PyBool_Check(copy)) {
    PyErr_Format(PyExc_TypeError, "__dlpack__: copy must be None, True or False, not %.100R", copy);
    return nullptr;
  }
  const dlbridge::Tensor& t = AsTensor(self)->t;
  const dlbridge::ExportPlan* plan = nullptr;  // the core's checks and device, for any kind
  DLB_TRY
  plan = &VersionedPlan(AsTensor(self));
  DLB_CATCH(nullptr)
  const DLDevice source = plan->Device();
  DLDevice target = source;
  if (dlDevice != Py_None) {
    int64_t type = 0;
    int64_t id = 0;
    if (!ToIntPair(dlDevice, "__dlpack__: dl_device", &type, &id)) return nullptr;
    target.device_type = static_cast<DLDeviceType>(type);
    target.device_id = static_cast<int32_t>(id);
    if (type != target.device_type || id != target.device_id) {
      PyErr_SetString(PyExc_BufferError, "__dlpack__: dl_device is out of range");
      return nullptr;
    }
  }
  bool needCopy = copy == Py_True;
  const bool sameDevice =
      target.device_type == source.device_type && target.device_id == source.device_id;
  if (!sameDevice) {
    if (!(target.device_type == kDLCPU && target.device_id == 0 &&
          IsHostReachable(source.device_type))) {
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: cannot export %s memory (device (%d, %d)) to dl_device (%d, %d); "
                   "dlbridge copies only host-reachable memory, and only to (kDLCPU, 0)",
                   t.descriptor.GetMemorySpace(), static_cast<int>(source.device_type),
                   static_cast<int>(source.device_id), static_cast<int>(target.device_type),
                   static_cast<int>(target.device_id));
      return nullptr;
    }
    if (copy == Py_False) {
      PyErr_Format(PyExc_BufferError,
                   "__dlpack__: dl_device (%d, %d) differs from the tensor's device (%d, %d), "
                   "which needs a copy, but copy=False",
                   static_cast<int>(target.device_type), static_cast<int>(target.device_id),
                   static_cast<int>(source.device_type), static_cast<int>(source.device_id));
      return nullptr;
    }
    needCopy = true;
  }
  if (needCopy && target.device_type != kDLCPU) {
    PyErr_Format(PyExc_BufferError,
                 "__dlpack__: copy=True for device (%d, %d): dlbridge copies only into kDLCPU "
                 "memory (pass dl_device=(1, 0) for host-reachable data)",
                 static_cast<int>(target.device_type), static_cast<int>(target.device_id));
    return nullptr;
  }
  if (!CheckStream(stream, target)) return nullptr;
  DLB_TRY
  if (needCopy) {
    dlbridge::Tensor copied = dlbridge::CopyToHost(*plan);
    if (versioned) {
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(copied));
      m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      return NewCapsule(m);
    }
    return NewCapsule(dlbridge::ToDLPack(std::move(copied)));
  }
  if (versioned) return NewCapsule(ExportSelf<DLManagedTensorVersioned>(self));
  return NewCapsule(ExportSelf<DLManagedTensor>(self));
  DLB_CATCH(nullptr)
}

// ---------------------------------------------------------------------------------------
// Capsules

// Preserves the pending exception (if any) across a capsule destructor's work.
struct SavedException {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exc = PyErr_GetRaisedException();
  ~SavedException() { PyErr_SetRaisedException(exc); }
#else
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* traceback = nullptr;
  SavedException() { PyErr_Fetch(&type, &value, &traceback); }
  ~SavedException() { PyErr_Restore(type, value, traceback); }
#endif
  SavedException(const SavedException&) = delete;
  SavedException& operator=(const SavedException&) = delete;
};

// Calls the deleter only while the capsule is unconsumed (still named kName).
template <class Managed, const char* kName>
void CapsuleDestructorWork(PyObject* capsule) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) {
    PyErr_Clear();
    return;
  }
  if (std::strcmp(name, kName) != 0) return;  // consumed (renamed used_…): the consumer owns it
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, kName));
  if (m == nullptr) {
    PyErr_Clear();
    return;
  }
  if (m->deleter != nullptr) m->deleter(m);
}

template <class Managed, const char* kName>
void CapsuleDestructor(PyObject* capsule) {
  if (PyErr_Occurred() == nullptr) {
    CapsuleDestructorWork<Managed, kName>(capsule);
    if (PyErr_Occurred() != nullptr) PyErr_Clear();  // a deleter must not leave one behind
  } else {
    SavedException saved;  // the pending exception survives the deleter
    CapsuleDestructorWork<Managed, kName>(capsule);
  }
}

PyObject* NewCapsule(DLManagedTensorVersioned* m) {
  PyObject* capsule = PyCapsule_New(m, kVersionedName,
                                    &CapsuleDestructor<DLManagedTensorVersioned, kVersionedName>);
  if (capsule == nullptr) m->deleter(m);
  return capsule;
}

PyObject* NewCapsule(DLManagedTensor* m) {
  PyObject* capsule =
      PyCapsule_New(m, kLegacyName, &CapsuleDestructor<DLManagedTensor, kLegacyName>);
  if (capsule == nullptr) m->deleter(m);
  return capsule;
}

// ---------------------------------------------------------------------------------------
// Import

// Imports an owning versioned tensor (always consumed) into a new dlbridge.Tensor.
PyObject* ImportManaged(DLManagedTensorVersioned* m) {
  PyObject* result = AllocTensor();
  if (result == nullptr) {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
    return nullptr;
  }
  DLB_TRY
  AsTensor(result)->t = dlbridge::FromDLPack(m);  // consumes m, on failure too
  DLB_CATCH((Py_DECREF(result), nullptr))
  return result;
}

PyObject* ImportCapsule(PyObject* capsule) {
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) {
    if (!PyErr_Occurred()) {
      PyErr_SetString(PyExc_TypeError,
                      "dlbridge.from_dlpack: the capsule has no name; expected "
                      "'dltensor' or 'dltensor_versioned'");
    }
    return nullptr;
  }
  bool versioned = false;
  if (std::strcmp(name, kVersionedName) == 0) {
    versioned = true;
  } else if (std::strcmp(name, kLegacyName) != 0) {
    if (std::strcmp(name, kUsedLegacyName) == 0 || std::strcmp(name, kUsedVersionedName) == 0) {
      PyErr_Format(PyExc_ValueError,
                   "dlbridge.from_dlpack: the DLPack capsule was already consumed (its name is "
                   "'%s'); a capsule can be imported only once",
                   name);
    } else {
      PyErr_Format(PyExc_TypeError,
                   "dlbridge.from_dlpack: a capsule named '%s' is not a DLPack tensor; expected "
                   "'dltensor' or 'dltensor_versioned'",
                   name);
    }
    return nullptr;
  }
  void* pointer = PyCapsule_GetPointer(capsule, name);
  if (pointer == nullptr) return nullptr;
  PyObject* result = AllocTensor();  // before anything is consumed
  if (result == nullptr) return nullptr;
  // Renaming cannot fail for a valid capsule; from here the import owns the tensor, and
  // FromDLPack consumes it whatever happens (its deleter runs once on failure).
  if (PyCapsule_SetName(capsule, versioned ? kUsedVersionedName : kUsedLegacyName) != 0) {
    Py_DECREF(result);
    return nullptr;
  }
  DLB_TRY
  if (versioned) {
    AsTensor(result)->t = dlbridge::FromDLPack(static_cast<DLManagedTensorVersioned*>(pointer));
  } else {
    AsTensor(result)->t = dlbridge::FromDLPack(static_cast<DLManagedTensor*>(pointer));
  }
  DLB_CATCH((Py_DECREF(result), nullptr))
  return result;
}

PyObject* LookupOnType(PyTypeObject* type, PyObject* name) {  // borrowed, never raises
#if PY_VERSION_HEX < 0x030E0000
  return _PyType_Lookup(type, name);
#else
  PyObject* value = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name);
  if (value == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  Py_DECREF(value);  // the type keeps it alive
  return value;
#endif
}

// Producer types whose __dlpack__ rejected max_version (e.g. NumPy 1.x, PyTorch 1.x): asked
// without it from then on, so the fallback's TypeError is paid once per type. An entry holds
// a strong reference to its type and is valid only while the type's version tag is unchanged.
struct LegacyType {
  PyTypeObject* type = nullptr;
  unsigned int tag = 0;
};
LegacyType g_legacy_types[8];
unsigned g_legacy_next = 0;

bool TagValid(PyTypeObject* type) {
  return PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) && type->tp_version_tag != 0;
}

bool IsLegacyOnly(PyTypeObject* type) {
  for (const LegacyType& entry : g_legacy_types) {
    if (entry.type == type) return TagValid(type) && entry.tag == type->tp_version_tag;
  }
  return false;
}

void RememberLegacyOnly(PyTypeObject* type) {
  if (!TagValid(type)) return;
  for (LegacyType& entry : g_legacy_types) {
    if (entry.type == type) {
      entry.tag = type->tp_version_tag;
      return;
    }
  }
  LegacyType& slot = g_legacy_types[g_legacy_next++ % 8];
  Py_XDECREF(reinterpret_cast<PyObject*>(slot.type));
  Py_INCREF(reinterpret_cast<PyObject*>(type));
  slot.type = type;
  slot.tag = type->tp_version_tag;
}

#if DLBRIDGE_PY_EXCHANGE_API
// The producer type's exchange API of major version 1 (walking prev_api), or null.
const DLPackExchangeAPI* FindExchangeApi(PyTypeObject* type) {
  PyObject* capsule = LookupOnType(type, g_str_exchange_api);
  if (capsule == nullptr || !PyCapsule_CheckExact(capsule)) return nullptr;
  auto* header =
      static_cast<DLPackExchangeAPIHeader*>(PyCapsule_GetPointer(capsule, kExchangeApiName));
  if (header == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  for (int depth = 0; header != nullptr && depth < 64; ++depth) {
    if (header->version.major == 1) {
      auto* api = reinterpret_cast<const DLPackExchangeAPI*>(header);
      return api->managed_tensor_from_py_object_no_sync != nullptr ? api : nullptr;
    }
    header = header->prev_api;
  }
  return nullptr;
}
#endif

PyObject* FromDlpack(PyObject*, PyObject* obj) {
  if (PyCapsule_CheckExact(obj)) return ImportCapsule(obj);
  PyTypeObject* type = Py_TYPE(obj);
#if DLBRIDGE_PY_EXCHANGE_API
  if (const DLPackExchangeAPI* api = FindExchangeApi(type)) {
    DLManagedTensorVersioned* m = nullptr;
    if (api->managed_tensor_from_py_object_no_sync(obj, &m) != 0 || m == nullptr) {
      if (!PyErr_Occurred()) {
        PyErr_SetString(PyExc_BufferError,
                        "dlbridge.from_dlpack: the producer's "
                        "managed_tensor_from_py_object_no_sync failed");
      }
      return nullptr;
    }
    return ImportManaged(m);
  }
#endif
  if (LookupOnType(type, g_str_dlpack) == nullptr) {
    PyErr_Format(
        PyExc_TypeError,
        "dlbridge.from_dlpack: %.100s has no __dlpack__ method and is not a DLPack capsule",
        type->tp_name);
    return nullptr;
  }
  PyObject* args[2] = {obj, g_max_version};
  PyObject* capsule = nullptr;
  if (!IsLegacyOnly(type)) {
    capsule = PyObject_VectorcallMethod(g_str_dlpack, args, 1, g_kwnames_max_version);
    if (capsule == nullptr) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) return nullptr;
      PyErr_Clear();  // a producer from before max_version: ask again without it
      capsule = PyObject_VectorcallMethod(g_str_dlpack, args, 1, nullptr);
      if (capsule != nullptr) RememberLegacyOnly(type);
    }
  } else {
    capsule = PyObject_VectorcallMethod(g_str_dlpack, args, 1, nullptr);
  }
  if (capsule == nullptr) return nullptr;
  PyObject* result = nullptr;
  if (PyCapsule_CheckExact(capsule)) {
    result = ImportCapsule(capsule);
  } else {
    PyErr_Format(PyExc_TypeError,
                 "dlbridge.from_dlpack: %.100s.__dlpack__ returned %.100s, not "
                 "a DLPack capsule",
                 type->tp_name, Py_TYPE(capsule)->tp_name);
  }
  Py_DECREF(capsule);
  return result;
}

// ---------------------------------------------------------------------------------------
// The DLPack 1.3 C exchange API (one static table, published on dlbridge.Tensor's type)

#if DLBRIDGE_PY_EXCHANGE_API
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
  DLB_TRY
  *out = ExportSelf<DLManagedTensorVersioned>(obj);
  DLB_CATCH(-1)
  return 0;
}

int ApiToPyObject(DLManagedTensorVersioned* tensor, void** out) {
  PyObject* obj = ImportManaged(tensor);
  if (obj == nullptr) return -1;
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

DLPackExchangeAPI g_exchange_api = {
    {{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION}, nullptr},
    &ApiAllocator,
    &ApiFromPyObject,
    &ApiToPyObject,
    &ApiDLTensorFromPyObject,
    &ApiCurrentWorkStream,
};
#endif

// ---------------------------------------------------------------------------------------
// Type and module definitions

PyMethodDef kTensorMethods[] = {
    {"__dlpack__", DLB_METH(TensorDlpack), METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "-> PyCapsule. "
     "A 'dltensor_versioned' capsule when max_version[0] >= 1, else a legacy 'dltensor' "
     "(refused for read-only data). Zero-copy unless copy=True or dl_device needs a copy."},
    {"__dlpack_device__", DLB_METH(TensorDlpackDevice), METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n-> (device_type, device_id)"},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kTensorGetSet[] = {
    {"descriptor", TensorGetDescriptor, nullptr,
     const_cast<char*>("The tensor's MemoryDescriptor (a view: changes apply to the tensor)"),
     nullptr},
    {"dtype", TensorGetDtype, nullptr, const_cast<char*>("(code, bits, lanes)"), nullptr},
    {"shape", TensorGetShape, nullptr, const_cast<char*>("tuple of extents"), nullptr},
    {"strides", TensorGetStrides, nullptr, const_cast<char*>("tuple of strides, in elements"),
     nullptr},
    {"ndim", TensorGetNdim, nullptr, const_cast<char*>("number of dimensions"), nullptr},
    {"byte_offset", TensorGetByteOffset, nullptr,
     const_cast<char*>("bytes from the descriptor's pointer to element zero"), nullptr},
    {"device", TensorGetDevice, nullptr,
     const_cast<char*>("(device_type, device_id) as stored; (0, 0) = derived from the space"),
     nullptr},
    {"flags", TensorGetFlags, TensorSetFlags, const_cast<char*>("DLPACK_FLAG_BITMASK_* bits"),
     nullptr},
    {"readonly", TensorGetReadOnly, nullptr, const_cast<char*>("whether FLAG_READ_ONLY is set"),
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kTensorSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(TensorNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(TensorDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(TensorRepr)},
    {Py_tp_methods, kTensorMethods},
    {Py_tp_getset, kTensorGetSet},
    {Py_tp_doc,
     const_cast<char*>(
         "Tensor(descriptor, dtype, shape, strides=None, byte_offset=0, device=None, "
         "flags=0)\n--\n\nA described buffer and its layout. The descriptor's hold moves "
         "into the tensor (the descriptor keeps its description). Strides are in "
         "elements (None = C-contiguous); device (type, id) None = from the space.")},
    {0, nullptr},
};

PyType_Spec kTensorSpec = {"dlbridge.Tensor", sizeof(PyTensor), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, kTensorSlots};

// ---------------------------------------------------------------------------------------
// The conformance checker (spec/conformance.md): reads a capsule's tensor, consumes nothing.

PyObject* FindingsList(const std::vector<dlbridge::Finding>& findings) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(findings.size()));
  if (list == nullptr) return nullptr;
  for (size_t i = 0; i < findings.size(); ++i) {
    const dlbridge::Finding& f = findings[i];
    PyObject* row = Py_BuildValue("(sss)", f.rule.c_str(), dlbridge::SeverityName(f.severity),
                                  f.message.c_str());
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), row);
  }
  return list;
}

PyObject* CheckCapsule(PyObject*, PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_SetString(PyExc_TypeError, "dlbridge._check_capsule: expected a DLPack capsule");
    return nullptr;
  }
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr) return nullptr;
  const bool versioned = std::strcmp(name, kVersionedName) == 0;
  if (!versioned && std::strcmp(name, kLegacyName) != 0) {
    PyErr_Format(PyExc_ValueError,
                 "dlbridge._check_capsule: a capsule named '%s' is not an unconsumed DLPack "
                 "tensor; expected 'dltensor' or 'dltensor_versioned'",
                 name);
    return nullptr;
  }
  void* pointer = PyCapsule_GetPointer(capsule, name);
  if (pointer == nullptr) return nullptr;
  std::vector<dlbridge::Finding> findings;
  DLB_TRY
  findings = versioned
                 ? dlbridge::CheckDLPack(static_cast<const DLManagedTensorVersioned*>(pointer))
                 : dlbridge::CheckDLPack(static_cast<const DLManagedTensor*>(pointer));
  DLB_CATCH(nullptr)
  return FindingsList(findings);
}

PyObject* CheckerRulesList(PyObject*, PyObject*) {
  int count = 0;
  const dlbridge::CheckerRule* rules = dlbridge::CheckerRules(&count);
  PyObject* list = PyList_New(count);
  if (list == nullptr) return nullptr;
  for (int i = 0; i < count; ++i) {
    PyObject* row = Py_BuildValue("(sss)", rules[i].id, dlbridge::SeverityName(rules[i].severity),
                                  rules[i].summary);
    if (row == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, row);
  }
  return list;
}

PyMethodDef kModuleMethods[] = {
    {"_check_capsule", DLB_METH(CheckCapsule), METH_O,
     "_check_capsule($module, capsule, /)\n--\n\n"
     "-> [(rule, severity, message)]: runs dlbridge::CheckDLPack on an "
     "unconsumed 'dltensor'/'dltensor_versioned' capsule; the capsule is neither renamed nor "
     "consumed. An empty list means conforming."},
    {"_checker_rules", DLB_METH(CheckerRulesList), METH_NOARGS,
     "_checker_rules($module, /)\n--\n\n"
     "-> [(rule, severity, summary)]: every rule _check_capsule can report."},
    {"from_dlpack", DLB_METH(FromDlpack), METH_O,
     "from_dlpack($module, obj, /)\n--\n\n"
     "-> dlbridge.Tensor: imports any DLPack producer (through its type's "
     "__dlpack_c_exchange_api__ when it has one, else __dlpack__(max_version=(1, N)), retried "
     "without arguments on TypeError) or an unconsumed 'dltensor'/'dltensor_versioned' capsule."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "dlbridge._dlbridge",
                       "dlbridge: zero-copy DLPack exchange of memory descriptors.",
                       -1,
                       kModuleMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

bool Intern(PyObject** slot, const char* text) {
  *slot = PyUnicode_InternFromString(text);
  return *slot != nullptr;
}

bool AddInt(PyObject* module, const char* name, long long value) {
  PyObject* v = PyLong_FromLongLong(value);
  if (v == nullptr) return false;
  int rc = PyModule_AddObject(module, name, v);
  if (rc != 0) Py_DECREF(v);
  return rc == 0;
}

}  // namespace

// The extension is dlbridge._dlbridge; python/dlbridge/__init__.py re-exports it as dlbridge.
PyMODINIT_FUNC PyInit__dlbridge(void) {
  if (!Intern(&g_str_dlpack, "__dlpack__") ||
      !Intern(&g_str_exchange_api, "__dlpack_c_exchange_api__") ||
      !Intern(&g_str_stream, "stream") || !Intern(&g_str_max_version, "max_version") ||
      !Intern(&g_str_dl_device, "dl_device") || !Intern(&g_str_copy, "copy") ||
      !Intern(&g_str_code, "code")) {
    return nullptr;
  }
  g_kwnames_max_version = PyTuple_Pack(1, g_str_max_version);
  g_max_version = Py_BuildValue("(ii)", 1, DLPACK_MINOR_VERSION);
  if (g_kwnames_max_version == nullptr || g_max_version == nullptr) return nullptr;

  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  g_descriptor_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kDescriptorSpec));
  g_tensor_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kTensorSpec));
  if (g_descriptor_type == nullptr || g_tensor_type == nullptr) {
    Py_DECREF(module);
    return nullptr;
  }
#if DLBRIDGE_PY_EXCHANGE_API
  PyObject* api = PyCapsule_New(&g_exchange_api, kExchangeApiName, nullptr);
  if (api == nullptr ||
      PyObject_SetAttr(reinterpret_cast<PyObject*>(g_tensor_type), g_str_exchange_api, api) != 0) {
    Py_XDECREF(api);
    Py_DECREF(module);
    return nullptr;
  }
  Py_DECREF(api);
#endif
  Py_INCREF(g_descriptor_type);
  Py_INCREF(g_tensor_type);
  if (PyModule_AddObject(module, "MemoryDescriptor",
                         reinterpret_cast<PyObject*>(g_descriptor_type)) != 0 ||
      PyModule_AddObject(module, "Tensor", reinterpret_cast<PyObject*>(g_tensor_type)) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
  PyObject* version = PyUnicode_FromFormat("%d.%d.%d", DLBRIDGE_VERSION_MAJOR,
                                           DLBRIDGE_VERSION_MINOR, DLBRIDGE_VERSION_PATCH);
  PyObject* dlpackVersion = Py_BuildValue("(ii)", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  if (version == nullptr || dlpackVersion == nullptr ||
      PyModule_AddObject(module, "__version__", version) != 0 ||
      PyModule_AddObject(module, "DLPACK_VERSION", dlpackVersion) != 0 ||
      !AddInt(module, "FLAG_READ_ONLY", static_cast<long long>(DLPACK_FLAG_BITMASK_READ_ONLY)) ||
      !AddInt(module, "FLAG_IS_COPIED", static_cast<long long>(DLPACK_FLAG_BITMASK_IS_COPIED)) ||
      !AddInt(module, "kDLCPU", kDLCPU) || !AddInt(module, "kDLCUDA", kDLCUDA) ||
      !AddInt(module, "kDLCUDAHost", kDLCUDAHost) || !AddInt(module, "kDLROCM", kDLROCM) ||
      !AddInt(module, "kDLROCMHost", kDLROCMHost) ||
      !AddInt(module, "kDLCUDAManaged", kDLCUDAManaged) ||
      !AddInt(module, "kDLOneAPI", kDLOneAPI)) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
