// dlbridge.MemoryDescriptor: the core's descriptor API, its view of a
// dlbridge.Tensor's own descriptor, and Python owners held from C++ (released on any thread,
// through python_entry.cpp's DecRefAnyThread).
#include "py_internal.h"

namespace dlbpy {
namespace {

// Runs a call of the core's that returns nothing: None, or its Error as the Python exception.
template <class Call>
PyObject* CallCore(Call&& call) {
  DLB_TRY
  call();
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

// The deleter of owner references made by MemoryDescriptor.SetOwner(obj).
struct PyOwnerDeleter {
  void operator()(const void* object) const noexcept {
    DecRefAnyThread(static_cast<PyObject*>(const_cast<void*>(object)));
  }
};

// PY-1: the seed API, the constructor taking Set's arguments; the core's errors map as
// spec/python.md says (errors.cpp).
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
  d->consumed = false;
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
  PyObject_GC_UnTrack(self);
  PyDescriptor* d = AsDescriptor(self);
  {
    SavedException saved;        // see PY-51: a pending exception survives the release
    d->own.~MemoryDescriptor();  // drops this object's own hold, if any
    Py_CLEAR(d->base);
  }
  type->tp_free(self);
  Py_DECREF(type);
}

// PY-53: the cycle collector sees the Python owner this object's own descriptor holds and
// the tensor a view keeps (a view's owner is the tensor's, which the tensor reports).
int DescriptorTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  PyDescriptor* d = AsDescriptor(self);
  Py_VISIT(d->base);
  Py_VISIT(SolePythonOwner(d->own));
  return 0;
}

int DescriptorClear(PyObject* self) {
  PyDescriptor* d = AsDescriptor(self);
  if (SolePythonOwner(d->own) != nullptr) d->own.SetOwner(nullptr);  // drops the reference
  d->d = &d->own;  // a view must not outlive the tensor it points into
  Py_CLEAR(d->base);
  return 0;
}

// (see PY-50) The hold of a tensor's descriptor view is about to change (a new hold, cleared or
// handed over): refused while exports rely on it; else the tensor prepares its exports again
// and the descriptor is no longer marked consumed.
dlbridge::MemoryDescriptor* HoldChange(PyObject* self, const char* what) {
  PyDescriptor* d = AsDescriptor(self);
  if (d->base != nullptr && !CheckNoLiveExports(AsTensor(d->base), what)) return nullptr;
  ConsumedMark(d) = false;
  return Mutable(self);
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
  return CallCore([&] { Mutable(self)->Set(p, n, space, role); });
}

PyObject* DescSetPointer(PyObject* self, PyObject* value) {
  int64_t p = 0;
  if (!ToAddress(value, "pointer", &p)) return nullptr;
  return CallCore([&] { Mutable(self)->SetPointer(p); });
}

PyObject* DescGetPointer(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetPointer());
}

PyObject* DescSetSize(PyObject* self, PyObject* value) {
  int64_t n = 0;
  if (!ToInt64(value, "size_in_bytes", &n)) return nullptr;
  return CallCore([&] { Mutable(self)->SetSizeInBytes(n); });
}

PyObject* DescGetSize(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetSizeInBytes());
}

PyObject* DescSetSpace(PyObject* self, PyObject* value) {
  const char* space = ToUtf8(value, "memory_space");
  if (space == nullptr) return nullptr;
  return CallCore([&] { Mutable(self)->SetMemorySpace(space); });
}

PyObject* DescGetSpace(PyObject* self, PyObject*) {
  return PyUnicode_FromString(AsDescriptor(self)->d->GetMemorySpace());
}

PyObject* DescSetRole(PyObject* self, PyObject* value) {
  const char* role = ToUtf8(value, "role");
  if (role == nullptr) return nullptr;
  return CallCore([&] { AsDescriptor(self)->d->SetRole(role); });  // not exported: no Mutable
}

PyObject* DescGetRole(PyObject* self, PyObject*) {
  return PyUnicode_FromString(AsDescriptor(self)->d->GetRole());
}

// PY-2: a C release and its context as integers; TakeRelease hands the duty over.
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
  dlbridge::MemoryDescriptor* d = HoldChange(self, "SetReleaseAddress");
  if (d == nullptr) return nullptr;
  d->SetReleaseAddress(release, context);
  Py_RETURN_NONE;
}

PyObject* DescGetReleaseAddress(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetReleaseAddress());
}

PyObject* DescGetReleaseContextAddress(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(AsDescriptor(self)->d->GetReleaseContextAddress());
}

PyObject* DescSetOwner(PyObject* self, PyObject* owner) {
  dlbridge::MemoryDescriptor* d = HoldChange(self, "SetOwner");
  if (d == nullptr) return nullptr;
  DLB_TRY
  if (owner == Py_None) {
    d->SetOwner(nullptr);
  } else {
    Py_INCREF(owner);  // on bad_alloc, shared_ptr's constructor runs the deleter (a DECREF)
    d->SetOwner(std::shared_ptr<const void>(owner, PyOwnerDeleter{}));
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
  dlbridge::MemoryDescriptor* d = HoldChange(self, "TakeRelease");
  if (d == nullptr) return nullptr;
  DLB_TRY
  d->TakeRelease(release, context);
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
     "drops the hold; from interpreter shutdown on it is leaked instead."},
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
    {Py_tp_traverse, reinterpret_cast<void*>(DescriptorTraverse)},
    {Py_tp_clear, reinterpret_cast<void*>(DescriptorClear)},
    {Py_tp_repr, reinterpret_cast<void*>(DescRepr)},
    {Py_tp_methods, kDescriptorMethods},
    {Py_tp_doc,
     const_cast<char*>(
         "MemoryDescriptor(pointer=0, size_in_bytes=0, memory_space='host', role='data')\n--\n\n"
         "One buffer described with primitive values, and what keeps it alive: a "
         "release (SetReleaseAddress) or a Python owner (SetOwner).")},
    {0, nullptr},
};

}  // namespace

PyObject* SolePythonOwner(const dlbridge::MemoryDescriptor& d) {
  std::shared_ptr<const void> owner = d.GetOwner();
  // Only a reference the descriptor alone keeps is reported (use_count: it and this copy):
  // a shared one is external to the collector, so the owner is kept, never freed early.
  if (!owner || std::get_deleter<PyOwnerDeleter>(owner) == nullptr || owner.use_count() != 2) {
    return nullptr;
  }
  return static_cast<PyObject*>(const_cast<void*>(owner.get()));
}

// The descriptor is about to change: a tensor it belongs to must check its exports again.
dlbridge::MemoryDescriptor* Mutable(PyObject* self) {
  PyDescriptor* d = AsDescriptor(self);
  if (d->base != nullptr) Invalidate(AsTensor(d->base));
  return d->d;
}

PyObject* DescriptorView(PyObject* tensor) {
  PyObject* self = g_descriptor_type->tp_alloc(g_descriptor_type, 0);
  if (self == nullptr) return nullptr;
  PyDescriptor* d = AsDescriptor(self);
  new (&d->own) dlbridge::MemoryDescriptor();
  d->d = &AsTensor(tensor)->t.descriptor;
  Py_INCREF(tensor);
  d->base = tensor;
  d->consumed = false;
  return self;
}

PyType_Spec kDescriptorSpec = {"dlbridge.MemoryDescriptor", sizeof(PyDescriptor), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, kDescriptorSlots};

}  // namespace dlbpy
