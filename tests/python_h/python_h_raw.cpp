// python_h_raw: a raw C API extension built on dlbridge/python.h, driven by test_python_h.py.
// It exports counted C++ tensors (their release frees and counts), imports any producer and
// reports what it got, and defines producer types with exchange-API tables of their own.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "dlbridge/python.h"

namespace {

namespace dp = dlbridge::python;

std::atomic<int> g_released{0};
int64_t g_last_pointer = 0;

void CountedFree(void* context) {
  delete[] static_cast<float*>(context);
  g_released.fetch_add(1);
}

// A host float32 tensor (rows, cols) holding 0, 1, 2, ...; its release frees it and counts.
dlbridge::Tensor MakeTensor(int64_t rows, int64_t cols, uint64_t flags = 0) {
  const int64_t n = rows * cols;
  auto* data = new float[static_cast<size_t>(n > 0 ? n : 1)];
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  dlbridge::Tensor t;
  t.descriptor.Set(reinterpret_cast<int64_t>(data), n * 4, "host");
  t.descriptor.SetRelease(&CountedFree, data);
  t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 32, 1}, {rows, cols});
  t.flags = flags;
  g_last_pointer = reinterpret_cast<int64_t>(data);
  return t;
}

PyObject* Tuple(const dlbridge::IndexSpan& span) {
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(span.size));
  for (size_t i = 0; tuple != nullptr && i < span.size; ++i) {
    PyTuple_SET_ITEM(tuple, static_cast<Py_ssize_t>(i), PyLong_FromLongLong(span.data[i]));
  }
  return tuple;
}

// The sum of a host tensor's elements (float32/64, int32/64), walking its strides.
double Sum(const dlbridge::Tensor& t) {
  const auto& layout = t.layout;
  const DLDataType dtype = layout.Dtype();
  const int64_t count = layout.ElementCount();
  if (count == 0 || t.descriptor.GetPointer() == 0) return 0.0;
  const auto* base = reinterpret_cast<const char*>(t.descriptor.GetPointer()) + layout.ByteOffset();
  const int32_t ndim = layout.Ndim();
  std::vector<int64_t> index(static_cast<size_t>(ndim), 0);
  const int64_t item = dtype.bits / 8;
  double sum = 0.0;
  for (int64_t k = 0; k < count; ++k) {
    int64_t offset = 0;
    for (int32_t d = 0; d < ndim; ++d)
      offset += index[static_cast<size_t>(d)] * layout.Strides().data[d];
    const char* p = base + offset * item;
    if (dtype.code == kDLFloat && dtype.bits == 32) sum += *reinterpret_cast<const float*>(p);
    if (dtype.code == kDLFloat && dtype.bits == 64) sum += *reinterpret_cast<const double*>(p);
    if (dtype.code == kDLInt && dtype.bits == 32) sum += *reinterpret_cast<const int32_t*>(p);
    if (dtype.code == kDLInt && dtype.bits == 64)
      sum += static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    for (int32_t d = ndim - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < layout.Shape().data[d]) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return sum;
}

PyObject* Info(const dlbridge::Tensor& t) {
  const auto& l = t.layout;
  return Py_BuildValue(
      "{s:L,s:N,s:N,s:(iii),s:(ii),s:K,s:O,s:d}", "data",
      static_cast<long long>(t.descriptor.GetPointer() + static_cast<int64_t>(l.ByteOffset())),
      "shape", Tuple(l.Shape()), "strides", Tuple(l.Strides()), "dtype", int{l.Dtype().code},
      int{l.Dtype().bits}, int{l.Dtype().lanes}, "device", static_cast<int>(t.device.device_type),
      static_cast<int>(t.device.device_id), "flags", static_cast<unsigned long long>(t.flags),
      "holds", t.descriptor.HasOwnership() ? Py_True : Py_False, "sum", Sum(t));
}

// export_capsule(rows, cols, versioned): a counted tensor as a capsule (ToCapsule).
PyObject* ExportCapsule(PyObject*, PyObject* args) {
  long long rows = 0, cols = 0;
  int versioned = 1, readOnly = 0;
  if (!PyArg_ParseTuple(args, "LL|pp", &rows, &cols, &versioned, &readOnly)) return nullptr;
  return dp::ToCapsule(MakeTensor(rows, cols, readOnly ? DLPACK_FLAG_BITMASK_READ_ONLY : 0),
                       versioned != 0);
}

// export_for(max_version): ToCapsuleForMaxVersion of a counted (2, 3) tensor.
PyObject* ExportFor(PyObject*, PyObject* maxVersion) {
  return dp::ToCapsuleForMaxVersion(MakeTensor(2, 3), maxVersion);
}

// raise_code(n): SetPythonError for a dlbridge::Error of code n (every code's class, PYH-1).
PyObject* RaiseCode(PyObject*, PyObject* arg) {
  const long code = PyLong_AsLong(arg);
  if (code == -1 && PyErr_Occurred() != nullptr) return nullptr;
  dp::SetPythonError(dlbridge::Error(static_cast<dlbridge::ErrorCode>(code), "raised by code"));
  return nullptr;
}

PyObject* Released(PyObject*, PyObject*) { return PyLong_FromLong(g_released.load()); }
PyObject* LastPointer(PyObject*, PyObject*) { return PyLong_FromLongLong(g_last_pointer); }

// import_info(obj): FromPyObject, then what the tensor is; the import is dropped on return.
PyObject* ImportInfo(PyObject*, PyObject* obj) {
  try {
    const dlbridge::Tensor t = dp::FromPyObject(obj);
    return Info(t);
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

PyObject* ImportCapsule(PyObject*, PyObject* capsule) {
  try {
    const dlbridge::Tensor t = dp::FromCapsule(capsule);
    return Info(t);
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

// import_drop(obj) / view_drop(obj): an import or a no-sync view, dropped at once (the bench's
// calls: nothing but the helper and the release).
PyObject* ImportDrop(PyObject*, PyObject* obj) {
  try {
    dp::FromPyObject(obj);
    Py_RETURN_NONE;
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

PyObject* ViewDrop(PyObject*, PyObject* obj) {
  try {
    dp::FromPyObjectNoSync(obj);
    Py_RETURN_NONE;
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

// hold(obj) keeps an import until drop_held(), to let the test drop the producer first.
std::vector<dlbridge::Tensor>* g_held = new std::vector<dlbridge::Tensor>();

PyObject* Hold(PyObject*, PyObject* obj) {
  try {
    g_held->push_back(dp::FromPyObject(obj));
    return PyLong_FromSize_t(g_held->size());
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

PyObject* DropHeld(PyObject*, PyObject*) {
  g_held->clear();
  Py_RETURN_NONE;
}

// drop_held_on_thread(): drops every held import on a native thread that has no GIL.
PyObject* DropHeldOnThread(PyObject*, PyObject*) {
  std::vector<dlbridge::Tensor> held = std::move(*g_held);
  g_held->clear();
  Py_BEGIN_ALLOW_THREADS std::thread([&held] { held.clear(); }).join();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// hold_owner(obj): a Tensor over obj's buffer held by OwnerFromPyObject(obj), kept with the
// imports; export_owned(obj): the same as a legacy capsule.
bool OwnedTensor(PyObject* obj, dlbridge::Tensor* out) {
  Py_buffer view;
  if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) != 0) return false;
  const auto size = static_cast<int64_t>(view.len);
  out->descriptor.Set(reinterpret_cast<int64_t>(view.buf), size, "host");
  PyBuffer_Release(&view);  // the test's objects (NumPy arrays) never move their memory
  out->descriptor.SetOwner(dp::OwnerFromPyObject(obj));
  out->layout = dlbridge::TensorLayout(DLDataType{kDLUInt, 8, 1}, {size});
  return true;
}

PyObject* HoldOwner(PyObject*, PyObject* obj) {
  dlbridge::Tensor t;
  if (!OwnedTensor(obj, &t)) return nullptr;
  g_held->push_back(std::move(t));
  Py_RETURN_NONE;
}

PyObject* ExportOwned(PyObject*, PyObject* obj) {
  dlbridge::Tensor t;
  if (!OwnedTensor(obj, &t)) return nullptr;
  return dp::ToCapsule(std::move(t), false);
}

// view_info(obj): FromPyObjectNoSync and what it saw.
PyObject* ViewInfo(PyObject*, PyObject* obj) {
  try {
    const dp::View view = dp::FromPyObjectNoSync(obj);
    PyObject* info = Info(view.tensor);
    if (info == nullptr) return nullptr;
    PyObject* stream =
        view.stream_known ? PyLong_FromVoidPtr(view.stream) : (Py_INCREF(Py_None), Py_None);
    const char* path = view.path == dp::ViewPath::kExchangeApi ? "exchange_api" : "dlpack";
    if (PyDict_SetItemString(info, "stream", stream) != 0 ||
        PyDict_SetItemString(info, "path", PyUnicode_FromString(path)) != 0) {
      Py_DECREF(info);
      info = nullptr;
    }
    Py_DECREF(stream);
    return info;
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

// view_flags(obj, need_flags): (path, flags, flags_known) of FromPyObjectNoSync's view.
PyObject* ViewFlags(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int needFlags = 0;
  if (!PyArg_ParseTuple(args, "Op", &obj, &needFlags)) return nullptr;
  try {
    dp::ViewOptions options;
    options.need_flags = needFlags != 0;
    const dp::View view = dp::FromPyObjectNoSync(obj, options);
    return Py_BuildValue(
        "(sKO)", view.path == dp::ViewPath::kExchangeApi ? "exchange_api" : "dlpack",
        static_cast<unsigned long long>(view.tensor.flags), view.flags_known ? Py_True : Py_False);
  } catch (const dp::ErrorAlreadySet&) {
    return nullptr;
  }
}

PyObject* ExchangeApiOf(PyObject*, PyObject* type) {
  if (!PyType_Check(type)) {
    PyErr_SetString(PyExc_TypeError, "exchange_api_of takes a type");
    return nullptr;
  }
  const void* api = dp::FindExchangeApi(reinterpret_cast<PyTypeObject*>(type));
  if (api == nullptr) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(const_cast<void*>(api));
}

// make_named_capsule(name): a capsule that is no DLPack tensor; its destructor counts.
std::atomic<int> g_named_destroyed{0};
int g_named_target = 0;

PyObject* MakeNamedCapsule(PyObject*, PyObject* args) {
  const char* name = nullptr;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  auto* kept = new std::string(name);  // a capsule's name must outlive it (test only: kept)
  return PyCapsule_New(&g_named_target, kept->c_str(),
                       [](PyObject*) { g_named_destroyed.fetch_add(1); });
}

PyObject* NamedDestroyed(PyObject*, PyObject*) { return PyLong_FromLong(g_named_destroyed.load()); }

// --- Producer types: a __dlpack__ of ToCapsuleForMaxVersion, and exchange-API tables. ---

struct ProducerObject {
  PyObject_HEAD int
      mode;  // 0: a good view, 1: a negative extent, 2: the producer raises BufferError,
             // 3: success with an exception set, 4: failure with no exception set
  float data[6];
  int64_t shape[2];
  int64_t strides[2];
};

std::atomic<int> g_view_calls{0}, g_stream_calls{0}, g_dlpack_calls{0};
int g_stream_device = -1;

PyObject* ProducerNew(PyTypeObject* type, PyObject* args, PyObject*) {
  int mode = 0;
  if (!PyArg_ParseTuple(args, "|i", &mode)) return nullptr;
  auto* self = reinterpret_cast<ProducerObject*>(type->tp_alloc(type, 0));
  if (self == nullptr) return nullptr;
  self->mode = mode;
  for (int i = 0; i < 6; ++i) self->data[i] = static_cast<float>(10 + i);
  self->shape[0] = 2;
  self->shape[1] = 3;
  self->strides[0] = 3;
  self->strides[1] = 1;
  return reinterpret_cast<PyObject*>(self);
}

void ProducerDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

// __dlpack__(*, max_version=None, stream=None, dl_device=None, copy=None)
PyObject* ProducerDLPack(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (nargs != 0) {
    PyErr_SetString(PyExc_TypeError, "__dlpack__ takes keyword arguments only");
    return nullptr;
  }
  PyObject* maxVersion = nullptr;
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "max_version") == 0) {
      maxVersion = args[i];
    }
  }
  g_dlpack_calls.fetch_add(1);
  return dp::ToCapsuleForMaxVersion(MakeTensor(2, 3), maxVersion);
}

PyObject* ProducerDevice(PyObject*, PyObject*) { return Py_BuildValue("(ii)", 1, 0); }

int ViewOf(void* pyObject, DLTensor* out) {
  g_view_calls.fetch_add(1);
  auto* self = static_cast<ProducerObject*>(pyObject);
  if (self->mode == 2) {
    PyErr_SetString(PyExc_BufferError, "this producer refuses a no-sync view");
    return -1;
  }
  if (self->mode == 4) return -1;
  self->shape[0] = self->mode == 1 ? -1 : 2;
  if (self->mode == 3) PyErr_SetString(PyExc_KeyError, "left set by the producer");
  out->data = self->data;
  out->device = DLDevice{kDLCPU, 0};
  out->ndim = 2;
  out->dtype = DLDataType{kDLFloat, 32, 1};
  out->shape = self->shape;
  out->strides = self->strides;
  out->byte_offset = 0;
  return 0;
}

int g_stream_mode = 0;  // 0: answers 0x1234, 1: success with an exception set, 2: fails silently

int CurrentStream(DLDeviceType deviceType, int32_t, void** out) {
  g_stream_calls.fetch_add(1);
  g_stream_device = static_cast<int>(deviceType);
  if (g_stream_mode == 2) return -1;
  if (g_stream_mode == 1) PyErr_SetString(PyExc_KeyError, "left set by current_work_stream");
  *out = reinterpret_cast<void*>(uintptr_t{0x1234});
  return 0;
}

PyObject* SetStreamMode(PyObject*, PyObject* arg) {
  g_stream_mode = static_cast<int>(PyLong_AsLong(arg));
  if (PyErr_Occurred() != nullptr) return nullptr;
  Py_RETURN_NONE;
}

DLPackExchangeAPI g_api_v1 = {
    {{1, DLPACK_MINOR_VERSION}, nullptr}, nullptr, nullptr, nullptr, &ViewOf, &CurrentStream};
// A newer major version first: the helpers walk prev_api to the version 1 table.
DLPackExchangeAPI g_api_v2 = {
    {{2, 0}, &g_api_v1.header}, nullptr, nullptr, nullptr, nullptr, nullptr};
// A table without dltensor_from_py_object_no_sync (allowed): the view takes __dlpack__.
DLPackExchangeAPI g_api_noview = {
    {{1, DLPACK_MINOR_VERSION}, nullptr}, nullptr, nullptr, nullptr, nullptr, &CurrentStream};

// Hostile tables: a prev_api chain that loops without a version 1 table, and a version 1
// table with every function NULL (the view then takes __dlpack__).
DLPackExchangeAPI g_api_loop = {{{3, 0}, nullptr}, nullptr, nullptr, nullptr, nullptr, nullptr};
DLPackExchangeAPI g_api_empty = {
    {{1, DLPACK_MINOR_VERSION}, nullptr}, nullptr, nullptr, nullptr, nullptr, nullptr};

PyObject* ApiCounts(PyObject*, PyObject*) {
  return Py_BuildValue("{s:i,s:i,s:i,s:i}", "view", g_view_calls.load(), "stream",
                       g_stream_calls.load(), "dlpack", g_dlpack_calls.load(), "stream_device",
                       g_stream_device);
}

PyObject* TableAddress(PyObject*, PyObject* args) {
  const char* which = nullptr;
  if (!PyArg_ParseTuple(args, "s", &which)) return nullptr;
  const std::string w = which;
  if (w == "v1") return PyLong_FromVoidPtr(&g_api_v1);
  if (w == "v2") return PyLong_FromVoidPtr(&g_api_v2);
  return PyLong_FromVoidPtr(&g_api_noview);
}

PyMethodDef g_producer_methods[] = {
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&ProducerDLPack)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"__dlpack_device__", &ProducerDevice, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot g_producer_slots[] = {{Py_tp_new, reinterpret_cast<void*>(&ProducerNew)},
                                  {Py_tp_dealloc, reinterpret_cast<void*>(&ProducerDealloc)},
                                  {Py_tp_methods, g_producer_methods},
                                  {0, nullptr}};

// Adds a producer type named `name`, publishing `api` as __dlpack_c_exchange_api__ if given.
bool AddProducer(PyObject* module, const char* name, const char* qualified,
                 DLPackExchangeAPI* api) {
  PyType_Spec spec = {qualified, sizeof(ProducerObject), 0, Py_TPFLAGS_DEFAULT, g_producer_slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return false;
  if (api != nullptr) {
    PyObject* capsule = PyCapsule_New(api, "dlpack_exchange_api", nullptr);
    if (capsule == nullptr ||
        PyObject_SetAttrString(type, "__dlpack_c_exchange_api__", capsule) != 0) {
      Py_XDECREF(capsule);
      Py_DECREF(type);
      return false;
    }
    Py_DECREF(capsule);
  }
  if (PyModule_AddObject(module, name, type) != 0) {
    Py_DECREF(type);
    return false;
  }
  return true;
}

PyMethodDef g_methods[] = {{"export_capsule", &ExportCapsule, METH_VARARGS, nullptr},
                           {"export_for", &ExportFor, METH_O, nullptr},
                           {"released", &Released, METH_NOARGS, nullptr},
                           {"raise_code", &RaiseCode, METH_O, nullptr},
                           {"last_pointer", &LastPointer, METH_NOARGS, nullptr},
                           {"import_info", &ImportInfo, METH_O, nullptr},
                           {"import_capsule", &ImportCapsule, METH_O, nullptr},
                           {"import_drop", &ImportDrop, METH_O, nullptr},
                           {"view_drop", &ViewDrop, METH_O, nullptr},
                           {"view_flags", &ViewFlags, METH_VARARGS, nullptr},
                           {"hold", &Hold, METH_O, nullptr},
                           {"drop_held", &DropHeld, METH_NOARGS, nullptr},
                           {"drop_held_on_thread", &DropHeldOnThread, METH_NOARGS, nullptr},
                           {"hold_owner", &HoldOwner, METH_O, nullptr},
                           {"export_owned", &ExportOwned, METH_O, nullptr},
                           {"view_info", &ViewInfo, METH_O, nullptr},
                           {"exchange_api_of", &ExchangeApiOf, METH_O, nullptr},
                           {"make_named_capsule", &MakeNamedCapsule, METH_VARARGS, nullptr},
                           {"named_destroyed", &NamedDestroyed, METH_NOARGS, nullptr},
                           {"api_counts", &ApiCounts, METH_NOARGS, nullptr},
                           {"table_address", &TableAddress, METH_VARARGS, nullptr},
                           {"set_stream_mode", &SetStreamMode, METH_O, nullptr},
                           {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "python_h_raw",
                        nullptr,
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_python_h_raw() {
  PyObject* module = PyModule_Create(&g_module);
  if (module == nullptr) return nullptr;
  g_api_loop.header.prev_api = &g_api_loop.header;
  if (!AddProducer(module, "Exporter", "python_h_raw.Exporter", nullptr) ||
      !AddProducer(module, "TableProducerLoop", "python_h_raw.TableProducerLoop", &g_api_loop) ||
      !AddProducer(module, "TableProducerEmpty", "python_h_raw.TableProducerEmpty", &g_api_empty) ||
      !AddProducer(module, "TableProducer", "python_h_raw.TableProducer", &g_api_v1) ||
      !AddProducer(module, "TableProducerV2", "python_h_raw.TableProducerV2", &g_api_v2) ||
      !AddProducer(module, "TableProducerNoView", "python_h_raw.TableProducerNoView",
                   &g_api_noview)) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
