/// @file
/// Python helpers for C++ extensions (header-only; needs Python.h, not part of libdlbridge):
/// a dlbridge export as a DLPack capsule, any DLPack producer as a dlbridge::Tensor through
/// `__dlpack__`, and the kernel-call view ("N0" of the DLPack 1.3 header) through a producer
/// type's `__dlpack_c_exchange_api__`. spec/bridges.md ("Python helpers", PYH-*) gives the rules.
///
/// Conventions, for every function here:
///  - call with the GIL held (the thread state of the interpreter that owns the objects);
///  - functions returning `PyObject*` return a new reference, or NULL with a Python exception
///    set; they never throw;
///  - functions returning a C++ value throw ErrorAlreadySet with a Python exception set (a
///    dlbridge::Error becomes the exception class `dlbridge.from_dlpack` raises for its code,
///    with the core's message and a `code` attribute naming it). Catch it and return NULL to
///    Python (pybind11: `py::register_exception_translator(&dlbridge::python::TranslateException)`
///    once in the module init does this for every binding; nanobind:
///    `nb::register_exception_translator([](const std::exception_ptr& p, void*) {
///    dlbridge::python::TranslateException(p); })`);
///  - one interpreter per process, with a GIL: the per-type cache (FromPyObject,
///    FindExchangeApi) is guarded by it (not for sub-interpreters or free-threaded builds).
/// The deleters and releases of imports are the producer's own: dlbridge takes no GIL to run
/// them, and they may run on any thread (a producer whose deleter touches Python takes the GIL
/// itself, as the DLPack header asks).
#pragma once

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "dlbridge/error.h"
#include "dlbridge/from_dlpack.h"
#include "dlbridge/tensor.h"
#include "dlbridge/to_dlpack.h"

#if PY_VERSION_HEX < 0x03090000
#error "dlbridge/python.h needs Python >= 3.9 (PyObject_VectorcallMethod)"
#endif

#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 3
/// 1 when the DLPack header has the 1.3 exchange API (`DLPackExchangeAPI`): the no-sync view
/// then uses a producer type's `__dlpack_c_exchange_api__`; 0: it always takes `__dlpack__`.
#define DLBRIDGE_PYTHON_EXCHANGE_API 1
#else
#define DLBRIDGE_PYTHON_EXCHANGE_API 0
#endif

namespace dlbridge {
namespace python {

/// Thrown by the helpers that return C++ values when they fail: the Python error indicator
/// holds the exception. The catcher either returns NULL to Python at once or clears it.
class ErrorAlreadySet : public std::exception {
 public:
  /// The fixed text "a Python exception is set"; the exception itself is in the indicator.
  const char* what() const noexcept override { return "a Python exception is set"; }
};

/// The Python exception class for a dlbridge error code: the classes `dlbridge.from_dlpack`
/// raises (spec/python.md, "Errors"). Borrowed reference to a builtin exception type.
inline PyObject* ExceptionTypeFor(ErrorCode code) noexcept {
  // PYH-1: the one table, used by the dlbridge module too, so extensions raise what it raises.
  switch (code) {
    case ErrorCode::kUnsupportedVersion:
    case ErrorCode::kUnsupportedDevice:
    case ErrorCode::kDeviceMismatch:
    case ErrorCode::kMissingDeviceId:
    case ErrorCode::kMissingContext:
    case ErrorCode::kReadOnly:
    case ErrorCode::kRuntimeUnavailable:
    case ErrorCode::kStubLibrary:  // the runtime cannot be used: as kRuntimeUnavailable (see PY-61)
    case ErrorCode::kNoDevice:
    case ErrorCode::kRuntimeNotInitialized:
    case ErrorCode::kNoHold:
    // PY-40: an unknown dtype code is well-formed data this build cannot exchange, as an unknown
    // device is; bad bits/lanes (kInvalidDtype) stay ValueError.
    case ErrorCode::kUnsupportedDtype: return PyExc_BufferError;  // cannot be exchanged as asked
    case ErrorCode::kOutOfMemory: return PyExc_MemoryError;
    default: return PyExc_ValueError;  // malformed values: layout, dtype, flags, descriptor, ...
  }
}

/// Sets the Python exception for `error` (ExceptionTypeFor its code, its message, and a `code`
/// attribute with ErrorCodeName). Never throws; on a failure to build the exception, whatever
/// Python raised then is set instead.
inline void SetPythonError(const Error& error) noexcept {
  PyObject* type = ExceptionTypeFor(error.code());
  PyObject* exc = PyObject_CallFunction(type, "s", error.what());
  if (exc == nullptr) return;
  PyObject* code = PyUnicode_FromString(ErrorCodeName(error.code()));
  if (code == nullptr || PyObject_SetAttrString(exc, "code", code) != 0) PyErr_Clear();
  Py_XDECREF(code);
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
}

/// Sets the Python exception for the exception being handled (call inside a `catch`):
/// dlbridge::Error as SetPythonError, std::bad_alloc as MemoryError, ErrorAlreadySet keeps the
/// indicator, anything else is a RuntimeError with its what().
inline void SetPythonErrorFromCurrent() noexcept {
  try {
    throw;
  } catch (const ErrorAlreadySet&) {
    if (PyErr_Occurred() == nullptr) {
      PyErr_SetString(PyExc_SystemError, "dlbridge::python: ErrorAlreadySet without an exception");
    }
  } catch (const Error& e) {
    SetPythonError(e);
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "dlbridge::python: unknown C++ exception");
  }
}

/// An exception translator for pybind11 (`py::register_exception_translator(&TranslateException)`):
/// ErrorAlreadySet keeps the Python exception already set, dlbridge::Error becomes
/// SetPythonError's exception; anything else is rethrown for the next translator.
inline void TranslateException(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const ErrorAlreadySet&) {
    SetPythonErrorFromCurrent();
  } catch (const Error& e) {
    SetPythonError(e);
  }
}

namespace detail {

// The building blocks of the helpers below, one definition each of the Python DLPack
// protocol's names and steps; dlbridge's own module (python/src/) is built on them too, as
// nanobind builds its binding on its public header. Not a stable API.

// The capsule names of the Python specification of the DLPack header.
constexpr char kVersionedName[] = "dltensor_versioned";
constexpr char kLegacyName[] = "dltensor";
constexpr char kUsedVersionedName[] = "used_dltensor_versioned";
constexpr char kUsedLegacyName[] = "used_dltensor";
constexpr char kExchangeApiName[] = "dlpack_exchange_api";  // __dlpack_c_exchange_api__

// The name of an unconsumed capsule of a managed tensor type.
template <class Managed>
constexpr const char* CapsuleName() noexcept {
  return std::is_same<Managed, DLManagedTensorVersioned>::value ? kVersionedName : kLegacyName;
}

// What a capsule's name says it holds (a NULL name: kOther).
enum class CapsuleKind { kVersioned, kLegacy, kUsed, kOther };
inline CapsuleKind KindOfCapsule(const char* name) noexcept {
  if (name == nullptr) return CapsuleKind::kOther;
  if (std::strcmp(name, kVersionedName) == 0) return CapsuleKind::kVersioned;
  if (std::strcmp(name, kLegacyName) == 0) return CapsuleKind::kLegacy;
  if (std::strcmp(name, kUsedLegacyName) == 0 || std::strcmp(name, kUsedVersionedName) == 0) {
    return CapsuleKind::kUsed;
  }
  return CapsuleKind::kOther;
}

// Keeps the error indicator for its lifetime: a pending exception is set aside and put back,
// and one raised meanwhile (by a deleter or a finaliser it runs) is dropped, so that a callback
// run while an exception propagates neither sees nor loses it.
class KeptError {
 public:
  KeptError(const KeptError&) = delete;
  KeptError& operator=(const KeptError&) = delete;
#if PY_VERSION_HEX >= 0x030C0000
  KeptError() noexcept : exc_(PyErr_GetRaisedException()) {}
  ~KeptError() { PyErr_SetRaisedException(exc_); }  // replaces (drops) what was raised since

 private:
  PyObject* exc_;
#else
  KeptError() noexcept { PyErr_Fetch(&type_, &value_, &traceback_); }
  ~KeptError() { PyErr_Restore(type_, value_, traceback_); }  // replaces what was raised since

 private:
  PyObject *type_ = nullptr, *value_ = nullptr, *traceback_ = nullptr;
#endif
};

// Runs a deleter with the error indicator kept (KeptError): it may run Python code (a
// producer's finaliser) while an exception propagates.
template <class Managed>
void DeleteKeepingError(Managed* managed) noexcept {
  if (managed == nullptr || managed->deleter == nullptr) return;
  const KeptError kept;
  try {
    managed->deleter(managed);
  } catch (...) {  // a deleter must not throw; one that does has still run (see LT-7), and no
                   // C++ exception may unwind into the interpreter that called the destructor
  }
}

// PYH-2 and the module's PY-13: the one capsule destructor (of both kinds, for extensions and
// dlbridge's module alike): it deletes only an unconsumed capsule (its name still the
// original); a consumer renamed it used_... and owns the tensor then, the common end, which
// returns at once without touching the error indicator.
template <class Managed>
void CapsuleDestructor(PyObject* capsule) noexcept {
  if (PyCapsule_IsValid(capsule, CapsuleName<Managed>()) == 0) return;
  DeleteKeepingError(static_cast<Managed*>(PyCapsule_GetPointer(capsule, CapsuleName<Managed>())));
}

// Wraps a managed tensor: on failure its deleter runs (PYH-2) and NULL is returned.
template <class Managed>
PyObject* Wrap(Managed* managed) noexcept {
  if (managed == nullptr) {
    PyErr_SetString(PyExc_ValueError, "dlbridge::python::ToCapsule: the managed tensor is NULL");
    return nullptr;
  }
  PyObject* capsule = PyCapsule_New(managed, CapsuleName<Managed>(), &CapsuleDestructor<Managed>);
  if (capsule == nullptr) DeleteKeepingError(managed);  // keeps the capsule's MemoryError
  return capsule;
}

// PYH-4's first step (and the module's PY-14): the managed tensor of an unconsumed DLPack capsule
// (*versioned: which kind), checked by its name with nothing consumed or renamed; NULL with
// TypeError for a non-capsule or another name, ValueError for a consumed (used_...) capsule. `who`
// begins the message (the caller's name).
inline void* UnconsumedTensor(PyObject* capsule, const char* who, bool* versioned) noexcept {
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError, "%s: a '%.100s' is not a DLPack capsule", who,
                 Py_TYPE(capsule)->tp_name);
    return nullptr;
  }
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr && PyErr_Occurred() != nullptr) return nullptr;
  const CapsuleKind kind = KindOfCapsule(name);
  if (kind == CapsuleKind::kUsed) {
    PyErr_Format(PyExc_ValueError,
                 "%s: the DLPack capsule was already consumed (its name is '%s'); a capsule "
                 "can be imported only once: ask the producer's __dlpack__ for a new one",
                 who, name);
    return nullptr;
  }
  if (kind == CapsuleKind::kOther) {
    PyErr_Format(PyExc_TypeError,
                 "%s: a capsule %s%s%s is no DLPack tensor; expected 'dltensor_versioned' or "
                 "'dltensor'",
                 who, name == nullptr ? "without a name" : "named '", name == nullptr ? "" : name,
                 name == nullptr ? "" : "'");
    return nullptr;
  }
  *versioned = kind == CapsuleKind::kVersioned;
  return PyCapsule_GetPointer(capsule, name);
}

// PYH-4's second step, before the consuming import: renames the capsule used_..., so its
// destructor leaves the tensor to the importer from here on. False with the exception set
// (not reached for a capsule UnconsumedTensor accepted; nothing is consumed then).
inline bool MarkConsumed(PyObject* capsule, bool versioned) noexcept {
  return PyCapsule_SetName(capsule, versioned ? kUsedVersionedName : kUsedLegacyName) == 0;
}

}  // namespace detail

/// Wraps a versioned managed tensor in a `"dltensor_versioned"` capsule (new reference).
/// Ownership: the capsule owns `managed` from here on, on success and failure: a consumer
/// renames the capsule `used_dltensor_versioned` and calls the deleter itself; a capsule
/// dropped unconsumed calls `managed->deleter` once (with the error indicator kept). If the
/// capsule cannot be created, the deleter runs here and NULL is returned with the exception.
inline PyObject* ToCapsule(DLManagedTensorVersioned* managed) noexcept {
  return detail::Wrap(managed);
}

/// The same for a legacy managed tensor: a `"dltensor"` capsule (consumed: `used_dltensor`).
inline PyObject* ToCapsule(DLManagedTensor* managed) noexcept { return detail::Wrap(managed); }

/// Exports `tensor` (ToDLPackVersioned, or ToDLPack when `versioned` is false) as a capsule
/// (new reference). Ownership, on success: the tensor's hold is in the capsule (ToCapsule
/// above); `tensor` holds nothing. If the export refuses the tensor, `tensor` keeps its hold
/// and NULL is returned with the Error as a Python exception (SetPythonError). If only the
/// capsule cannot be created, the export's deleter runs (the hold is dropped: the release runs
/// once) and NULL is returned with the MemoryError.
inline PyObject* ToCapsule(Tensor&& tensor, bool versioned = true,
                           const ExportOptions& options = {}) noexcept {
  try {
    if (versioned) return ToCapsule(ToDLPackVersioned(std::move(tensor), options));
    return ToCapsule(ToDLPack(std::move(tensor), options));
  } catch (...) {
    SetPythonErrorFromCurrent();
    return nullptr;
  }
}

/// What a `__dlpack__(max_version=...)` implementation returns: the capsule kind the Python
/// protocol asks for by the consumer's `max_version`: NULL or None (a consumer that predates
/// it) or a major version 0 → legacy `"dltensor"`; `(major, minor)` with major >= 1 →
/// `"dltensor_versioned"`. Anything but None or a tuple of two integers is a TypeError, with
/// `tensor` untouched. Ownership otherwise as ToCapsule(Tensor&&, ...).
inline PyObject* ToCapsuleForMaxVersion(Tensor&& tensor, PyObject* maxVersion,
                                        const ExportOptions& options = {}) noexcept {
  bool versioned = false;  // PYH-3: the protocol's choice of capsule by max_version
  if (maxVersion != nullptr && maxVersion != Py_None) {
    if (!PyTuple_Check(maxVersion) || PyTuple_GET_SIZE(maxVersion) != 2 ||
        PyIndex_Check(PyTuple_GET_ITEM(maxVersion, 0)) == 0 ||
        PyIndex_Check(PyTuple_GET_ITEM(maxVersion, 1)) == 0) {
      PyErr_Format(PyExc_TypeError,
                   "max_version must be None or a tuple (major, minor) of two integers, not %R",
                   maxVersion);
      return nullptr;
    }
    const Py_ssize_t major = PyNumber_AsSsize_t(PyTuple_GET_ITEM(maxVersion, 0), nullptr);
    if (major == -1 && PyErr_Occurred() != nullptr) return nullptr;
    versioned = major >= 1;
  }
  return ToCapsule(std::move(tensor), versioned, options);
}

/// An owner for MemoryDescriptor::SetOwner that keeps the Python object `obj` alive: a new
/// strong reference, dropped when the last copy of the result goes, on any thread: the drop
/// takes the GIL (PyGILState_Ensure) itself. From interpreter finalisation on (and after it)
/// the reference is leaked on purpose, since taking the GIL then could end the thread; a
/// thread that drops it exactly while finalisation begins races with it, so keep such drops
/// before exit (dlbridge's own module closes that window with an atexit guard, see PY-52).
/// Ownership: on success the result holds one reference; on failure (std::bad_alloc, thrown)
/// none is taken. `obj` must not be NULL.
inline std::shared_ptr<const void> OwnerFromPyObject(PyObject* obj) {
  Py_INCREF(obj);
  // PYH-8: the reference is dropped under the GIL from any thread, leaked once finalising.
  // (Should the control block's allocation fail, shared_ptr runs this deleter itself.)
  return std::shared_ptr<const void>(obj, [](const void* held) {
    auto* o = static_cast<PyObject*>(const_cast<void*>(held));
#if PY_VERSION_HEX >= 0x030D0000
    const bool finalizing = Py_IsFinalizing() != 0;
#else
    const bool finalizing = _Py_IsFinalizing() != 0;
#endif
    if (Py_IsInitialized() == 0 || finalizing) return;
    const PyGILState_STATE state = PyGILState_Ensure();
    {
      const detail::KeptError kept;  // a finaliser run here keeps a pending exception
      Py_DECREF(o);
    }
    PyGILState_Release(state);
  });
}

/// Imports a DLPack capsule (`"dltensor_versioned"` or `"dltensor"`) with dlbridge::FromDLPack.
/// Ownership: the capsule is renamed `used_dltensor_versioned`/`used_dltensor` and its
/// managed tensor handed to FromDLPack, which consumes it on success (the result's release is
/// the producer's deleter, run once when the result's hold drops) and on failure (the deleter
/// runs once before the error). The capsule reference stays the caller's.
/// Throws ErrorAlreadySet: TypeError for a non-capsule or another name (nothing consumed),
/// ValueError for a consumed (`used_...`) capsule, and FromDLPack's errors (SetPythonError).
inline Tensor FromCapsule(PyObject* capsule, const ImportOptions& options = {}) {
  // see PYH-4: accept the two names, refuse used_ ones, rename before the consuming import.
  bool versioned = false;
  void* pointer = detail::UnconsumedTensor(capsule, "dlbridge::python::FromCapsule", &versioned);
  if (pointer == nullptr || !detail::MarkConsumed(capsule, versioned)) throw ErrorAlreadySet();
  try {
    if (versioned) return FromDLPack(static_cast<DLManagedTensorVersioned*>(pointer), options);
    return FromDLPack(static_cast<DLManagedTensor*>(pointer), options);
  } catch (...) {  // FromDLPack ran the deleter (see IMP-2)
    SetPythonErrorFromCurrent();
    throw ErrorAlreadySet();
  }
}

namespace detail {

// Interned names and the max_version request, created once per process (never freed: an
// extension's statics live as long as the interpreter); dlbridge's module uses them too.
inline PyObject* DunderDLPack() {
  static PyObject* name = PyUnicode_InternFromString("__dlpack__");
  return name;
}

inline PyObject* MaxVersionKwnames() {  // interned: callees match keywords by identity first
  static PyObject* names = Py_BuildValue("(N)", PyUnicode_InternFromString("max_version"));
  return names;
}

inline PyObject* MaxVersionRequest() {
  static PyObject* request = Py_BuildValue("(ii)", 1, DLPACK_MINOR_VERSION);
  return request;
}

// `name` on `type` (its MRO), where Python looks up a special method: a new reference, or
// NULL with nothing raised. Call it with no exception pending.
inline PyObject* LookupOnType(PyTypeObject* type, PyObject* name) noexcept {
#if PY_VERSION_HEX < 0x030E0000
  PyObject* found = _PyType_Lookup(type, name);
  Py_XINCREF(found);
  return found;
#else
  PyObject* found = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name);
  if (found == nullptr) PyErr_Clear();
  return found;
#endif
}

// The producer's method `name` called on args[0] (`nargs` counts it; kwnames' values follow
// the positional arguments): type(obj).name(obj, ...), looked up on the type as Python looks up
// special methods and NumPy's from_dlpack looks up __dlpack__, never an attribute of the
// instance. AttributeError when the type has none.
inline PyObject* CallTypeMethod(PyObject* name, PyObject* const* args, size_t nargs,
                                PyObject* kwnames) noexcept {
  PyObject* self = args[0];
  PyTypeObject* type = Py_TYPE(self);
  PyObject* method = LookupOnType(type, name);
  if (method == nullptr) {
    PyErr_Format(PyExc_AttributeError, "type object '%.100s' has no attribute '%U'", type->tp_name,
                 name);
    return nullptr;
  }
  PyObject* result = nullptr;
  if (PyFunction_Check(method) || Py_IS_TYPE(method, &PyMethodDescr_Type)) {
    result = PyObject_Vectorcall(method, args, nargs, kwnames);  // unbound: self first
  } else {  // any other descriptor binds as Python binds it; a plain callable takes no self
    descrgetfunc get = Py_TYPE(method)->tp_descr_get;
    PyObject* bound = method;
    if (get != nullptr) {
      bound = get(method, self, reinterpret_cast<PyObject*>(type));
    } else {
      Py_INCREF(bound);
    }
    if (bound != nullptr) result = PyObject_Vectorcall(bound, args + 1, nargs - 1, kwnames);
    Py_XDECREF(bound);
  }
  Py_DECREF(method);
  return result;
}

// Whether `obj`'s type lacks `__dlpack__`, asked with the pending error set aside and put
// back: PyObject_HasAttr would report a lookup failure as "Exception ignored" (3.13+, and for
// any call with an error pending), so the lookup is made here with nothing pending.
inline bool LacksDunderDLPack(PyObject* obj) {
  const KeptError pending;  // restored at the end, which also drops the lookup's own error
  PyObject* found = LookupOnType(Py_TYPE(obj), DunderDLPack());
  Py_XDECREF(found);
  return found == nullptr;
}

// Raises SystemError(`what`) with the pending exception (if any) as its __cause__.
inline void RaiseContractBroken(const char* what) {
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* cause = PyErr_GetRaisedException();
#else
  PyObject *type = nullptr, *cause = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &cause, &traceback);
  if (type != nullptr) {
    PyErr_NormalizeException(&type, &cause, &traceback);
    if (traceback != nullptr && cause != nullptr) PyException_SetTraceback(cause, traceback);
  }
  Py_XDECREF(type);
  Py_XDECREF(traceback);
#endif
  PyErr_SetString(PyExc_SystemError, what);
  if (cause == nullptr) return;
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* raised = PyErr_GetRaisedException();
  PyException_SetCause(raised, cause);  // steals `cause`
  PyErr_SetRaisedException(raised);
#else
  PyObject *t = nullptr, *v = nullptr, *tb = nullptr;
  PyErr_Fetch(&t, &v, &tb);
  PyErr_NormalizeException(&t, &v, &tb);
  PyException_SetCause(v, cause);  // steals `cause`
  PyErr_Restore(t, v, tb);
#endif
}

// A producer's C function (`function`: its name in the exchange API) returned `status`: throws
// ErrorAlreadySet when it failed, or broke its contract, which is SystemError with the
// producer's exception as cause: a failure without an exception set, or a success with one
// (what it wrote is then not used).
inline void CheckProducerStatus(int status, const char* function) {
  const bool raised = PyErr_Occurred() != nullptr;
  if (status == 0 && !raised) return;
  if (status != 0 && raised) throw ErrorAlreadySet();
  const std::string what = std::string("dlbridge::python: the producer's ") + function +
                           (status != 0 ? " failed without setting an exception"
                                        : " returned success with an exception set (what it "
                                          "wrote is not used)");
  RaiseContractBroken(what.c_str());
  throw ErrorAlreadySet();
}

// The type's version tag, 0 when it has no valid one. 3.12+ assigns tags lazily (asked for
// here, or a type not yet seen by the method cache would be learnt afresh on every call) and
// 3.13+ no longer sets Py_TPFLAGS_VALID_VERSION_TAG: a nonzero tag is the valid one
// (PyType_Modified zeroes it).
inline unsigned int VersionTag(PyTypeObject* type) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  if (type->tp_version_tag == 0) PyUnstable_Type_AssignVersionTag(type);
  return type->tp_version_tag;
#else
  return PyType_HasFeature(type, Py_TPFLAGS_VALID_VERSION_TAG) ? type->tp_version_tag : 0;
#endif
}

// What was learnt about a producer type, valid while the type is unchanged (its version tag).
struct TypeFacts {
  PyTypeObject* type = nullptr;
  unsigned int tag = 0;
  bool legacy_only = false;  // __dlpack__ answered only without arguments (see PYH-5)
  bool api_looked_up = false;
  const void* api = nullptr;  // the DLPackExchangeAPI, major version 1, or NULL (see PYH-6)
};

// The one per-type cache of the Python protocol (these helpers' and dlbridge's module's): 16
// types, the oldest replaced. It holds a strong reference to each type, so an address never
// names another type; read and written with the GIL held.
struct TypeCache {
  static constexpr unsigned kSize = 16;
  TypeFacts entries[kSize];
  unsigned next = 0;
};
inline TypeCache& TheTypeCache() noexcept {
  static TypeCache cache;
  return cache;
}

// The facts kept for `type` while it is unchanged; NULL when none are (nothing learnt yet, the
// type changed since, or it has no valid tag). Hot: every import asks.
inline TypeFacts* KnownFacts(PyTypeObject* type) noexcept {
  for (TypeFacts& f : TheTypeCache().entries) {
    if (f.type == type) {
      const unsigned int tag = VersionTag(type);
      return tag != 0 && f.tag == tag ? &f : nullptr;
    }
  }
  return nullptr;
}

// The entry to learn into for `type`: its entry (made fresh when the type changed since), else
// the oldest one, replaced; NULL when the type has no valid tag (nothing can be kept).
inline TypeFacts* LearnFacts(PyTypeObject* type) noexcept {
  const unsigned int tag = VersionTag(type);
  if (tag == 0) return nullptr;
  TypeCache& cache = TheTypeCache();
  for (TypeFacts& f : cache.entries) {
    if (f.type == type) {
      if (f.tag != tag) f = TypeFacts{type, tag};
      return &f;
    }
  }
  TypeFacts& slot = cache.entries[cache.next++ % TypeCache::kSize];
  PyTypeObject* old = slot.type;
  Py_INCREF(type);
  slot = TypeFacts{type, tag};
  Py_XDECREF(old);  // last: dropping a type may run code that uses the cache
  return &slot;
}

}  // namespace detail

/// Imports any object that speaks DLPack: `__dlpack__(max_version=(1, DLPACK_MINOR_VERSION))`,
/// and on TypeError (a producer older than `max_version`) `__dlpack__()`; a type that answered
/// only the call without arguments is asked without them from then on, while it is unchanged.
/// A DLPack capsule is imported as it is (FromCapsule). The capsule the producer returns is
/// imported by FromCapsule: renamed `used_...`, its managed tensor consumed by FromDLPack.
/// Ownership: the result holds the producer's tensor (its deleter runs once when the result's
/// hold drops, on whatever thread drops it; dlbridge takes no GIL for it); on failure nothing
/// is kept and a consumed tensor's deleter has run once.
/// Throws ErrorAlreadySet: AttributeError for an object without `__dlpack__`, the producer's
/// own exceptions, TypeError when it returns no DLPack capsule, and FromCapsule's errors.
inline Tensor FromPyObject(PyObject* producer, const ImportOptions& options = {}) {
  if (PyCapsule_CheckExact(producer)) return FromCapsule(producer, options);
  // PYH-5: max_version first, the call without arguments on TypeError, remembered per type.
  const detail::TypeFacts* facts = detail::KnownFacts(Py_TYPE(producer));
  const bool legacy = facts != nullptr && facts->legacy_only;
  // No PY_VECTORCALL_ARGUMENTS_OFFSET: args[-1] is not ours to lend.
  PyObject* args[] = {producer, detail::MaxVersionRequest()};
  PyObject* capsule =
      legacy ? nullptr
             : detail::CallTypeMethod(detail::DunderDLPack(), args, 1, detail::MaxVersionKwnames());
  if (legacy || (capsule == nullptr && PyErr_ExceptionMatches(PyExc_TypeError) != 0)) {
    PyErr_Clear();  // a producer older than max_version: asked again without arguments
    capsule = detail::CallTypeMethod(detail::DunderDLPack(), args, 1, nullptr);
    if (!legacy && capsule != nullptr) {
      if (detail::TypeFacts* learnt = detail::LearnFacts(Py_TYPE(producer))) {
        learnt->legacy_only = true;
      }
    }
  }
  if (capsule == nullptr) {
    if (PyErr_ExceptionMatches(PyExc_AttributeError) != 0 && detail::LacksDunderDLPack(producer)) {
      PyErr_Clear();
      PyErr_Format(PyExc_AttributeError,
                   "dlbridge::python::FromPyObject: a '%.100s' is no DLPack producer: it has no "
                   "__dlpack__ method (pass an array that implements the DLPack protocol, or a "
                   "DLPack capsule)",
                   Py_TYPE(producer)->tp_name);
    }
    throw ErrorAlreadySet();
  }
  if (!PyCapsule_CheckExact(capsule)) {
    PyErr_Format(PyExc_TypeError,
                 "dlbridge::python::FromPyObject: %.100s.__dlpack__ returned a '%.100s', not a "
                 "DLPack capsule",
                 Py_TYPE(producer)->tp_name, Py_TYPE(capsule)->tp_name);
    Py_DECREF(capsule);
    throw ErrorAlreadySet();
  }
  try {
    Tensor result = FromCapsule(capsule, options);
    Py_DECREF(capsule);
    return result;
  } catch (...) {
    Py_DECREF(capsule);  // unconsumed (a wrong kind): its own destructor frees it
    throw;
  }
}

/// Which way FromPyObjectNoSync reached the producer's tensor.
enum class ViewPath {
  kExchangeApi,  ///< The type's `__dlpack_c_exchange_api__` (`dltensor_from_py_object_no_sync`).
  kDLPack,       ///< The producer's `__dlpack__` (FromPyObject): the view owns an import.
};

/// A producer's tensor for the duration of a kernel call (FromPyObjectNoSync). Move-only.
struct View {
  /// The tensor, validated by FromDLPack's rules. On the kExchangeApi path its descriptor
  /// holds nothing: the memory is the producer object's, valid while that object is alive
  /// and unchanged (the DLPack header: until control returns to it). On the kDLPack path it
  /// holds the producer's managed tensor, whose deleter runs once when the View goes.
  Tensor tensor;
  /// Which way the tensor was reached.
  ViewPath path = ViewPath::kDLPack;
  /// The producer's current work stream for the tensor's device (`current_work_stream`), to
  /// launch kernels on without synchronising; NULL when none (CPU) or not asked.
  void* stream = nullptr;
  /// Whether `stream` is the producer's answer (exchange path with a stream query).
  bool stream_known = false;
  /// Whether `tensor.flags` is the producer's word. False on the kExchangeApi path: a DLTensor
  /// carries no flags, so `tensor.flags` is 0 there and does not say the memory is writable.
  /// A consumer that writes asks with ViewOptions::need_flags.
  bool flags_known = true;
};

/// How FromPyObjectNoSync imports.
struct ViewOptions {
  /// The rules the tensor is validated with (both paths).
  ImportOptions import;
  /// Ask the producer's `current_work_stream` for the tensor's device (exchange path only).
  bool query_stream = true;
  /// Take the `__dlpack__` path even where the type publishes an exchange API, so that the
  /// view's flags (read-only, copied) are the producer's: for a kernel that writes.
  bool need_flags = false;
};

/// The exchange API a type publishes as `__dlpack_c_exchange_api__` (a `"dlpack_exchange_api"`
/// capsule), walked along `prev_api` to a major version 1 table; NULL when there is none or it
/// is malformed (no Python error is left set). Cached per type while the type is unchanged
/// (the 1.3 header: a type's table lives as long as the process). Always NULL when built
/// against a DLPack header older than 1.3.
inline const void* FindExchangeApi(PyTypeObject* type) noexcept {
#if DLBRIDGE_PYTHON_EXCHANGE_API
  const detail::TypeFacts* facts = detail::KnownFacts(type);
  if (facts != nullptr && facts->api_looked_up) return facts->api;
  // PYH-6: the table on the type, major version 1 along prev_api, cached per type version.
  const DLPackExchangeAPI* api = nullptr;
  PyObject* capsule =
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "__dlpack_c_exchange_api__");
  if (capsule == nullptr) {
    PyErr_Clear();
  } else {
    if (PyCapsule_IsValid(capsule, detail::kExchangeApiName) != 0) {
      auto* header = static_cast<const DLPackExchangeAPIHeader*>(
          PyCapsule_GetPointer(capsule, detail::kExchangeApiName));
      // At most kMaxApiHops links: a hostile or broken table whose prev_api loops finds none.
      constexpr int kMaxApiHops = 16;
      int hops = 0;
      while (header != nullptr && header->version.major != 1) {
        header = ++hops < kMaxApiHops ? header->prev_api : nullptr;
      }
      api = reinterpret_cast<const DLPackExchangeAPI*>(header);
    }
    Py_DECREF(capsule);
  }
  // Learnt after the lookup, which may have run code that changed the cache.
  if (detail::TypeFacts* learnt = detail::LearnFacts(type)) {
    learnt->api_looked_up = true;
    learnt->api = api;
  }
  return api;
#else
  (void)type;
  return nullptr;
#endif
}

/// The kernel-call path ("N0" of the DLPack 1.3 header): a view of `obj`'s tensor without a
/// synchronisation or an owning export, for the length of a call. When `type(obj)` publishes
/// an exchange API with `dltensor_from_py_object_no_sync`, the view is that function's
/// non-owning DLTensor, validated by FromDLPack's rules (a copy of shape and strides; the
/// descriptor holds nothing), with the producer's `current_work_stream` for its device when
/// asked; its flags are unknown (View::flags_known). Otherwise, and with
/// ViewOptions::need_flags, the view is FromPyObject(obj) and owns that import.
/// Ownership: nothing of `obj` is consumed on the exchange path: keep `obj` alive and
/// unchanged while the view is used (an argument of the calling function is). On the
/// `__dlpack__` path as FromPyObject.
/// Throws ErrorAlreadySet: the producer's errors (no fallback once its table refused), a
/// tensor the rules refuse (SetPythonError; nothing to release), FromPyObject's errors.
inline View FromPyObjectNoSync(PyObject* obj, const ViewOptions& options = {}) {
  View view;
#if DLBRIDGE_PYTHON_EXCHANGE_API
  const auto* api = static_cast<const DLPackExchangeAPI*>(FindExchangeApi(Py_TYPE(obj)));
  if (api != nullptr && api->dltensor_from_py_object_no_sync != nullptr && !options.need_flags) {
    // PYH-7: the producer's non-owning DLTensor, checked by the import rules with no deleter
    // (so nothing is consumed or held), then its stream for the device.
    DLManagedTensorVersioned wrapper{};
    wrapper.version = api->header.version;
    detail::CheckProducerStatus(api->dltensor_from_py_object_no_sync(obj, &wrapper.dl_tensor),
                                "dltensor_from_py_object_no_sync");
    try {
      view.tensor = FromDLPack(&wrapper, options.import);
    } catch (...) {
      SetPythonErrorFromCurrent();
      throw ErrorAlreadySet();
    }
    view.path = ViewPath::kExchangeApi;
    view.flags_known = false;  // PYH-7: a DLTensor has no flags; 0 here is not "writable"
    if (options.query_stream && api->current_work_stream != nullptr) {
      void* stream = nullptr;
      detail::CheckProducerStatus(
          api->current_work_stream(wrapper.dl_tensor.device.device_type,
                                   wrapper.dl_tensor.device.device_id, &stream),
          "current_work_stream");
      view.stream = stream;
      view.stream_known = true;
    }
    return view;
  }
#endif
  view.tensor = FromPyObject(obj, options.import);
  view.path = ViewPath::kDLPack;
  return view;
}

}  // namespace python
}  // namespace dlbridge
