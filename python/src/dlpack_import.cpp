// Import (hot): dlbridge.from_dlpack through a producer's __dlpack__ (with the legacy-type
// cache and the array API's fallbacks) or a capsule, into a new dlbridge.Tensor, then the
// device and copy asked for. One translation unit.
#include <cstring>

#include "py_internal.h"

namespace dlbpy {
namespace {

// The import into a Tensor object allocated (tp_alloc) but not yet initialised: its tensor is
// FromDLPack's result, constructed in place (no default tensor first, no move into it).
// `managed` is consumed whatever happens (see IMP-2). On failure the object is freed and NULL
// returned with the Python error set.
template <class Managed>
PyObject* EmplaceImport(PyObject* self, Managed* managed) {
  try {
    new (&AsTensor(self)->t) dlbridge::Tensor(dlbridge::FromDLPack(managed));
  } catch (...) {
    SetCurrentException();
    InitTensorObject(self);  // a valid (empty) object for its dealloc
    Py_DECREF(self);
    return nullptr;
  }
  InitTensorFields(self);
  return self;
}

// A Tensor object for EmplaceImport, its tensor not yet built: `built` is false (tp_alloc's
// zeroes), so a collection run meanwhile (a failing import's deleter may run one) skips it.
PyObject* AllocForImport() { return g_tensor_type->tp_alloc(g_tensor_type, 0); }

// PY-15: a capsule's import: python.h's steps (see PYH-4), with the result allocated between
// them: other names refused before anything is consumed (a used_ capsule is already consumed:
// see PY-14), the result allocated, then the capsule renamed and its tensor handed to
// FromDLPack, which consumes it on failure too.
PyObject* ImportCapsule(PyObject* capsule) {
  bool versioned = false;
  void* pointer = pyh::UnconsumedTensor(capsule, "dlbridge.from_dlpack", &versioned);
  if (pointer == nullptr) return nullptr;
  PyObject* result = AllocForImport();  // before anything is consumed
  if (result == nullptr) return nullptr;
  // From the renaming on the import owns the tensor, and FromDLPack consumes it whatever
  // happens (its deleter runs once on failure).
  if (!pyh::MarkConsumed(capsule, versioned)) {
    InitTensorObject(result);
    Py_DECREF(result);
    return nullptr;
  }
  if (versioned) return EmplaceImport(result, static_cast<DLManagedTensorVersioned*>(pointer));
  return EmplaceImport(result, static_cast<DLManagedTensor*>(pointer));
}

// Whether `type` lacks `name`, asked while a failed call's exception is pending: the lookup
// must not see it (_PyType_Lookup asserts none is set; a failed getattr would replace it),
// so it is set aside and put back.
bool TypeLacks(PyTypeObject* type, PyObject* name) {
  const SavedException pending;
  PyObject* found = pyh::LookupOnType(type, name);
  Py_XDECREF(found);
  return found == nullptr;
}

}  // namespace

// Imports an owning versioned tensor (always consumed) into a new dlbridge.Tensor.
PyObject* ImportManaged(DLManagedTensorVersioned* m) {
  PyObject* result = AllocForImport();
  if (result == nullptr) {
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
    return nullptr;
  }
  return EmplaceImport(result, m);  // consumes m, on failure too
}

namespace {

// What from_dlpack's caller asked for (PY-34).
struct Request {
  PyObject* device = Py_None;  // None, or the (type, id) ints passed to the producer
  DLDevice want{};             // meaningful when device is not None
  PyObject* copy = Py_None;    // None, True or False
  PyObject* stream = Py_None;  // None, or the stream= given (checked once the device is known)
};

// Whether a (device_type, device_id) pair read as int64 is a DLDevice's: both in 32 bits, the
// type not negative. The one range test of from_dlpack's devices, given or the producer's.
bool FitsDLDevice(int64_t type, int64_t id) {
  return static_cast<uint64_t>(type) <= INT32_MAX && id == static_cast<int32_t>(id);
}

bool ParseRequest(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, Request* request) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack() takes exactly one positional argument (x), %zd given; device, "
                 "copy and stream are keyword-only",
                 nargs);
    return false;
  }
  PyObject* device = Py_None;
  PyObject* const names[] = {g_str_device, g_str_copy, g_str_stream};
  PyObject** const slots[] = {&device, &request->copy, &request->stream};
  if (!ReadKeywords(kwnames, args + nargs, names, slots, "from_dlpack")) return false;
  if (!CheckCopyArgument(request->copy, "from_dlpack")) return false;
  if (device == Py_None) return true;
  // see PY-64: the producer is given the (type, id) ints whatever spelling was passed here
  if (!ToDevice(device, "from_dlpack: device", &request->want)) return false;
  request->device = Py_BuildValue("(ii)", static_cast<int>(request->want.device_type),
                                  static_cast<int>(request->want.device_id));
  return request->device != nullptr;
}

// The producer's capsule, from __dlpack__ with the array API's arguments: max_version always,
// dl_device and copy when asked for, stream when one is passed (`stream` not null, see PY-59).
// On TypeError (a producer older than those keywords) the call is made again with max_version
// alone, then with no arguments but the stream (PY-16), and *honoured says whether the
// producer took dl_device and copy. A type that took no arguments is asked without any (but
// the stream) from then on.
PyObject* CallDlpack(PyObject* obj, const Request& request, PyObject* stream, bool* honoured) {
  PyTypeObject* type = Py_TYPE(obj);
  const bool extra = request.device != Py_None || request.copy != Py_None;
  *honoured = false;
  PyObject* args[5] = {obj, g_max_version, request.device, request.copy, stream};
  PyObject* streamOnly[2] = {obj, stream};
  PyObject* versionAndStream[3] = {obj, g_max_version, stream};
  const bool withStream = stream != nullptr;
  auto bare = [&]() {  // the call of a producer from before max_version
    return withStream ? pyh::CallTypeMethod(g_str_dlpack, streamOnly, 1, g_kwnames_stream)
                      : pyh::CallTypeMethod(g_str_dlpack, args, 1, nullptr);
  };
  // Producer types whose __dlpack__ rejected max_version (NumPy 1.x, PyTorch 1.x) are asked
  // without it from then on, so the fallback's TypeError is paid once per type: python.h's
  // per-type cache, the one of the process's dlbridge code (see PYH-5).
  const pyh::TypeFacts* facts = pyh::KnownFacts(type);
  if (facts != nullptr && facts->legacy_only) return bare();
  PyObject* capsule = nullptr;
  if (extra) {
    capsule = pyh::CallTypeMethod(g_str_dlpack, args, 1,
                                  withStream ? g_kwnames_all_stream : g_kwnames_all);
    if (capsule != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) {
      *honoured = capsule != nullptr;
      return capsule;
    }
    PyErr_Clear();  // a producer from before dl_device and copy: those are met here
  }
  capsule = withStream ? pyh::CallTypeMethod(g_str_dlpack, versionAndStream, 1,
                                             g_kwnames_max_version_stream)
                       : pyh::CallTypeMethod(g_str_dlpack, args, 1, g_kwnames_max_version);
  if (capsule != nullptr || !PyErr_ExceptionMatches(PyExc_TypeError)) return capsule;
  PyErr_Clear();  // a producer from before max_version: ask again without arguments
  capsule = bare();
  if (capsule != nullptr) {
    if (pyh::TypeFacts* learnt = pyh::LearnFacts(type)) learnt->legacy_only = true;
  }
  return capsule;
}

// A __dlpack_device__ answer that is no DLDevice, refused as device= is (see PY-34) and naming
// the producer's method: read as it stood, 2**32 + 2 would be taken as kDLCUDA and given a
// stream. `parsed`: the answer was two integers (out of range, then); else ToIntPair's
// TypeError is replaced, since its text offers None, which this method may not return.
// Drops `answer`; returns false with the exception set.
[[gnu::cold, gnu::noinline]] bool RefuseDeviceAnswer(PyObject* obj, PyObject* answer, bool parsed) {
  if (parsed) {
    PyErr_Format(PyExc_ValueError,
                 "from_dlpack: %.100s.__dlpack_device__() returned %R, which is out of range: "
                 "(device_type, device_id) are 32-bit values, e.g. (kDLCPU, 0) = (1, 0); the "
                 "producer's method must return its DLDevice",
                 Py_TYPE(obj)->tp_name, answer);
  } else if (PyErr_ExceptionMatches(PyExc_TypeError) != 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "from_dlpack: %.100s.__dlpack_device__() returned %.100R; it must return a "
                 "(device_type, device_id) tuple of two integers, e.g. (kDLCPU, 0) = (1, 0)",
                 Py_TYPE(obj)->tp_name, answer);
  }
  Py_DECREF(answer);
  return false;
}

// (see PY-59) An object of exactly numpy.ndarray's type, whose __dlpack_device__() is (kDLCPU, 0)
// in every NumPy (its arrays are host memory), so the call, a third of a NumPy import's cost,
// is not made. Subclasses may override the method and are asked. The type is found through
// the "numpy.ndarray" name of its static type, checked against sys.modules' NumPy (never
// imported here) once, then kept.
bool IsNumpyArray(PyObject* obj) {
  static PyTypeObject* ndarray = nullptr;  // a strong reference, kept for the process
  PyTypeObject* type = Py_TYPE(obj);
  if (ndarray != nullptr) return type == ndarray;
  if (std::strcmp(type->tp_name, "numpy.ndarray") != 0) return false;
  PyObject* numpy = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
  if (numpy == nullptr) return false;
  PyObject* found = PyObject_GetAttrString(numpy, "ndarray");
  if (found == nullptr) {
    PyErr_Clear();
    return false;
  }
  if (found != reinterpret_cast<PyObject*>(type)) {
    Py_DECREF(found);
    return false;
  }
  ndarray = type;  // keeps `found`'s reference
  return true;
}

// (see PY-59) The device the producer's data are on: its __dlpack_device__() (*known false for
// a producer without one).
bool ProducerDevice(PyObject* obj, DLDevice* device, bool* known) {
  if (IsNumpyArray(obj)) {
    *device = DLDevice{kDLCPU, 0};
    *known = true;
    return true;
  }
  *known = false;
  PyObject* self[1] = {obj};
  PyObject* answer = pyh::CallTypeMethod(g_str_dlpack_device, self, 1, nullptr);
  if (answer == nullptr) {
    // Called without looking first (a lookup costs every import): a producer without the
    // method is told apart from one whose method raised AttributeError on this rare path.
    if (PyErr_ExceptionMatches(PyExc_AttributeError) != 0 &&
        TypeLacks(Py_TYPE(obj), g_str_dlpack_device)) {
      PyErr_Clear();
      return true;  // no __dlpack_device__: no stream
    }
    return false;
  }
  int64_t type = 0;
  int64_t id = 0;
  const bool ok = ToIntPair(answer, "from_dlpack: __dlpack_device__()", &type, &id);
  if (!ok || !FitsDLDevice(type, id)) return RefuseDeviceAnswer(obj, answer, ok);
  Py_DECREF(answer);
  *device = DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)};
  *known = true;
  return true;
}

// After a failed call of the producer's methods (made without looking them up first, which
// would cost every import): PY-16's AttributeError when `type` has no __dlpack__ at all, in
// place of whatever that call raised; otherwise the call's own error stands. Returns NULL.
PyObject* NoProducerOr(PyTypeObject* type) {
  if (!TypeLacks(type, g_str_dlpack)) return nullptr;
  PyErr_Clear();
  // PY-16: the array API's class for an object that is no producer.
  PyErr_Format(PyExc_AttributeError,
               "dlbridge.from_dlpack: %.100s has no __dlpack__ method and is not a DLPack "
               "capsule; pass a DLPack producer (a NumPy array, a torch tensor, a "
               "dlbridge.Tensor) or an unconsumed 'dltensor'/'dltensor_versioned' capsule",
               type->tp_name);
  return nullptr;
}

// PY-34, PY-35, PY-66: the imported tensor made what was asked for. Host-accessible memory
// asked for on (kDLCPU, 0) becomes host memory without a copy (the same bytes, now described
// as host memory); any other device than the data's is reached by a copy made here (see PY-65,
// CopyPlanTo: the core's CopyTo across devices), and so is copy=True that the producer did not
// take; copy=False refuses a copy. `consumer`: the stream the copy is for (see PY-59). Consumes
// `result` on failure.
PyObject* Conform(PyObject* result, const Request& request, bool honoured,
                  std::optional<int64_t> consumer) {
  dlbridge::Tensor& t = AsTensor(result)->t;
  const DLDevice have = t.device;
  const DLDevice target = request.device != Py_None ? request.want : have;
  const bool sameDevice =
      have.device_type == target.device_type && have.device_id == target.device_id;
  const bool hostView = !sameDevice && ReachesHostWithoutCopy(t, have, target);  // see PY-35
  const bool needCopy = (!sameDevice && !hostView) || (request.copy == Py_True && !honoured);
  if (!needCopy) {
    if (hostView) {
      t.device = DLDevice{kDLCPU, 0};
      t.descriptor.SetMemorySpace(dlbridge::MemorySpace::kHost);
    }
    return result;
  }
  if (request.copy == Py_False) {
    PyErr_Format(PyExc_BufferError,
                 "from_dlpack: copy=False, but the data is on device (%d, %d) and device=(%d, "
                 "%d) was asked for, which needs a copy: only host-accessible memory (%s) "
                 "reaches (kDLCPU, 0) without one; pass copy=None to allow the copy",
                 static_cast<int>(have.device_type), static_cast<int>(have.device_id),
                 static_cast<int>(target.device_type), static_cast<int>(target.device_id),
                 HostAccessibleTypeNames());
    Py_DECREF(result);
    return nullptr;
  }
  DLB_TRY
  // A one-shot copy made while the producer's memory is valid: the hold rule of exports
  // (see PY-54) does not apply to it, as it does not to the core's copies.
  dlbridge::ExportOptions options;
  options.allow_unowned = true;
  const dlbridge::ExportPlan plan(t, dlbridge::ExportKind::kVersioned, options);
  dlbridge::Tensor copied = CopyPlanTo(t, plan, target, consumer);
  copied.flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
  Invalidate(AsTensor(result));
  t = std::move(copied);  // the producer's tensor is released here
  DLB_CATCH((Py_DECREF(result), nullptr))
  return result;
}

}  // namespace

// PY-19: from_dlpack ingests through __dlpack__ only, never through the producer's
// __dlpack_c_exchange_api__ (the 1.3 header's N0: that table is for kernel calls; N1: ingestion
// and retention go through __dlpack__, where producers make their refusals).
PyObject* FromDlpack(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  Request request;
  if (!ParseRequest(args, nargs, kwnames, &request)) return nullptr;
  struct DropDevice {
    PyObject* device;
    ~DropDevice() {
      if (device != Py_None) Py_DECREF(device);
    }
  } dropDevice{request.device};
  const bool plain = request.device == Py_None && request.copy == Py_None;
  PyObject* obj = args[0];
  if (PyCapsule_CheckExact(obj)) {
    if (request.stream != Py_None) {  // see PY-59: nothing consumed
      PyErr_SetString(PyExc_ValueError,
                      "from_dlpack: stream= with a capsule: the capsule is made already, so no "
                      "producer can order its work before the stream; pass the producer object "
                      "itself, or stream=None");
      return nullptr;
    }
    PyObject* result = ImportCapsule(obj);
    if (result == nullptr || plain) return result;
    return Conform(result, request, false, std::nullopt);
  }
  PyTypeObject* type = Py_TYPE(obj);
  DLDevice own{};  // the producer's device, when it says
  bool ownKnown = false;
  if (!ProducerDevice(obj, &own, &ownKnown)) return NoProducerOr(type);
  // (see PY-59) The device the consumer will use: device= when given, else the producer's.
  const DLDevice consumer = request.device != Py_None ? request.want : own;
  const bool known = request.device != Py_None || ownKnown;
  bool passStream = false;
  int64_t streamValue = 0;
  if (known && !ImportStream(request.stream, consumer, &passStream, &streamValue)) return nullptr;
  if (!known && request.stream != Py_None) {
    if (TypeLacks(type, g_str_dlpack)) return NoProducerOr(type);
    PyErr_Format(PyExc_ValueError,
                 "from_dlpack: stream= for %.100s, which has no __dlpack_device__ to say which "
                 "device the stream would be of; pass device= as well, or stream=None",
                 type->tp_name);
    return nullptr;
  }
  // A copy made here for the consumer is queued on that stream (see PY-65).
  const std::optional<int64_t> copyStream =
      passStream ? std::optional<int64_t>(streamValue) : std::nullopt;
  // PY-66: data on a device without streams (the host) have nothing pending on one: the
  // producer gets no stream, whatever device the consumer asked for.
  if (ownKnown && !dlbridge::OrdersStreams(dlbridge::StreamFamilyOf(own.device_type))) {
    passStream = false;
  }
  DLDevice streamDevice = consumer;  // the device the passed stream is of
  PyObject* streamObject = nullptr;
  if (passStream) {
    streamObject = PyLong_FromLongLong(streamValue);
    if (streamObject == nullptr) return nullptr;
  }
  bool honoured = false;
  PyObject* capsule = CallDlpack(obj, request, streamObject, &honoured);
  Py_XDECREF(streamObject);
  if (capsule == nullptr && !plain && ownKnown && PyErr_ExceptionMatches(PyExc_BufferError) &&
      !TypeLacks(type, g_str_dlpack)) {
    // PY-66: the producer refused dl_device or copy: its own data, with the stream of its own
    // device (the default, see PY-59), and the request is met here.
    PyErr_Clear();
    passStream = false;
    if (!ImportStream(Py_None, own, &passStream, &streamValue)) return nullptr;
    streamObject = passStream ? PyLong_FromLongLong(streamValue) : nullptr;
    if (passStream && streamObject == nullptr) return nullptr;
    streamDevice = own;
    bool unused = false;
    capsule = CallDlpack(obj, Request{}, streamObject, &unused);
    Py_XDECREF(streamObject);
  }
  // (A C producer's result with an exception set never arrives here: CPython's call turns it
  // into SystemError and a NULL result.)
  if (capsule == nullptr) return NoProducerOr(type);
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
  if (result == nullptr) return result;
  // (see PY-59) The producer ordered its work before the stream passed; later exports (and a
  // copy made here) order after it. -1 ordered nothing, and data not on a CUDA/ROCm device has
  // no stream.
  dlbridge::Tensor& imported = AsTensor(result)->t;
  if (passStream && streamValue != -1 &&
      dlbridge::OrdersStreams(dlbridge::StreamFamilyOf(streamDevice.device_type)) &&
      dlbridge::StreamFamilyOf(imported.device.device_type) ==
          dlbridge::StreamFamilyOf(streamDevice.device_type)) {
    imported.stream = streamValue;
  }
  if (plain) return result;
  return Conform(result, request, honoured, copyStream);
}

}  // namespace dlbpy
