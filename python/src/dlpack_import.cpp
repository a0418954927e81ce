// Import (hot): dlbridge.from_dlpack through a producer's exchange API, its __dlpack__
// (with the legacy-type cache) or a capsule, into a new dlbridge.Tensor. One translation unit.
#include "py_internal.h"

namespace dlbpy {
namespace {

PyObject* AllocTensor() {
  PyObject* self = g_tensor_type->tp_alloc(g_tensor_type, 0);
  if (self == nullptr) return nullptr;
  InitTensorObject(self);
  return self;
}

// PY-15: a capsule's import: other names refused before anything is consumed; the result is
// allocated first, then the capsule renamed and its tensor handed to FromDLPack, which
// consumes it on failure too. PY-14: a used_ capsule is already consumed.
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
  const CapsuleKind kind = KindOfCapsule(name);
  if (kind == CapsuleKind::kUsed) {
    PyErr_Format(PyExc_ValueError,
                 "dlbridge.from_dlpack: the DLPack capsule was already consumed (its name is "
                 "'%s'); a capsule can be imported only once",
                 name);
    return nullptr;
  }
  if (kind == CapsuleKind::kOther) {
    PyErr_Format(PyExc_TypeError,
                 "dlbridge.from_dlpack: a capsule named '%s' is not a DLPack tensor; expected "
                 "'dltensor' or 'dltensor_versioned'",
                 name);
    return nullptr;
  }
  const bool versioned = kind == CapsuleKind::kVersioned;
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

// PY-16: producer types whose __dlpack__ rejected max_version (e.g. NumPy 1.x, PyTorch 1.x): asked
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
// PY-19: the producer type's exchange API of major version 1 (walking prev_api), or null.
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

}  // namespace

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

}  // namespace dlbpy
