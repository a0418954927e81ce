// dlbridge.Tensor: construction, attributes, __dlpack_device__, the export
// plans each tensor keeps, and the type's method and slot tables.
#include "py_internal.h"

namespace dlbpy {
namespace {

// PY-4: the layout from dtype, shape, strides and byte_offset; the descriptor's hold moves in.
PyObject* TensorNew(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject* descriptor = nullptr;
  PyObject* dtype = nullptr;
  PyObject* shape = nullptr;
  PyObject* strides = Py_None;
  PyObject* byteOffset = nullptr;
  PyObject* device = Py_None;
  PyObject* flags = nullptr;
  int allowUnowned = 0;
  PyObject* stream = Py_None;
  static const char* keywords[] = {"descriptor", "dtype", "shape",         "strides", "byte_offset",
                                   "device",     "flags", "allow_unowned", "stream",  nullptr};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!OO|OOOO$pO:Tensor",
                                   const_cast<char**>(keywords), g_descriptor_type, &descriptor,
                                   &dtype, &shape, &strides, &byteOffset, &device, &flags,
                                   &allowUnowned, &stream)) {
    return nullptr;
  }
  DLDataType dt{};
  std::vector<int64_t> shapeValues;
  std::vector<int64_t> strideValues;
  int64_t offset = 0;
  DLDevice dev{};  // type 0: the space's (see PY-64 for the forms `device` takes)
  int64_t flagBits = 0;
  if (!ToDtype(dtype, &dt) || !ToInt64Vector(shape, "shape", &shapeValues)) return nullptr;
  if (strides != Py_None && !ToInt64Vector(strides, "strides", &strideValues)) return nullptr;
  if (byteOffset != nullptr && !ToInt64(byteOffset, "byte_offset", &offset)) return nullptr;
  if (device != Py_None && !ToDevice(device, "Tensor: device", &dev)) return nullptr;
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
  PyDescriptor* from = AsDescriptor(descriptor);
  // Checked before the hold moves, so a refused stream leaves the descriptor as it was.
  std::optional<int64_t> producerStream;
  if (!ParseProducerStream(stream, dev, *from->d, &producerStream)) {
    return nullptr;
  }
  // PY-50: a view's hold moves only when no export of the viewed tensor relies on it.
  if (from->base != nullptr && !CheckNoLiveExports(AsTensor(from->base), "Tensor(descriptor)")) {
    return nullptr;
  }
  // PY-55: a hold moves once; a second Tensor from the same descriptor would hold nothing.
  if (ConsumedMark(from) && !allowUnowned) {
    PyErr_SetString(PyExc_BufferError,
                    "Tensor: the MemoryDescriptor's hold already moved into an earlier "
                    "dlbridge.Tensor, so this one would hold nothing; give the descriptor a hold "
                    "again (SetOwner, SetReleaseAddress) or pass allow_unowned=True");
    return nullptr;
  }
  PyObject* self = type->tp_alloc(type, 0);
  if (self == nullptr) return nullptr;
  InitTensorObject(self);
  dlbridge::Tensor& t = AsTensor(self)->t;
  AsTensor(self)->allow_unowned = allowUnowned != 0;
  DLB_TRY
  t.layout = dlbridge::TensorLayout(dt, std::move(shapeValues), std::move(strideValues),
                                    static_cast<uint64_t>(offset));
  t.device = dev;
  t.flags = static_cast<uint64_t>(flagBits);
  t.stream = producerStream;
  // The hold moves into the tensor; the Python descriptor keeps its description only.
  dlbridge::MemoryDescriptor& source = *Mutable(descriptor);
  std::string role = source.GetRole();
  const bool held = source.HasOwnership();
  t.descriptor = std::move(source);
  source.Set(t.descriptor.GetPointer(), t.descriptor.GetSizeInBytes(),
             t.descriptor.GetMemorySpace(), role.c_str());
  t.descriptor.SetRole(role.c_str());
  if (held) ConsumedMark(from) = true;
  DLB_CATCH((Py_DECREF(self), nullptr))
  return self;
}

void TensorDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (ExportPlans* plans = AsTensor(self)->plans) {
    plans->~ExportPlans();
    PyMem_Free(plans);
  }
  {
    SavedException saved;         // see PY-51: a pending exception survives the release
    AsTensor(self)->t.~Tensor();  // drops the hold: calls the release or the imported deleter
  }
  type->tp_free(self);
  Py_DECREF(type);
}

// (see PY-53) The cycle collector sees the Python owner of the tensor's hold (SetOwner through
// Tensor.descriptor). Exports keep the tensor alive with references the collector cannot
// see, so a tensor with live exports is never collected.
int TensorTraverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!AsTensor(self)->built) return 0;  // an import is building its tensor
  Py_VISIT(SolePythonOwner(AsTensor(self)->t.descriptor));
  return 0;
}

int TensorClear(PyObject* self) {
  PyTensor* tensor = AsTensor(self);
  if (tensor->built && SolePythonOwner(tensor->t.descriptor) != nullptr) {
    Invalidate(tensor);
    tensor->t.descriptor.SetOwner(nullptr);  // drops the reference
  }
  return 0;
}

PyObject* TensorGetDescriptor(PyObject* self, void*) { return DescriptorView(self); }

// PY-38: Tensor.dtype is the name NumPy and PyTorch users read ("float32"); the DLPack triple
// is Tensor.dl_dtype. A triple the core cannot name (a tensor made with a tuple the export
// will refuse) reads as "(code, bits, lanes)", so that reading an attribute never raises.
PyObject* TensorGetDtype(PyObject* self, void*) {
  DLDataType dt = AsTensor(self)->t.layout.Dtype();
  try {
    return PyUnicode_FromString(dlbridge::DtypeName(dt).c_str());
  } catch (const dlbridge::Error&) {
    return PyUnicode_FromFormat("(%d, %d, %d)", static_cast<int>(dt.code),
                                static_cast<int>(dt.bits), static_cast<int>(dt.lanes));
  } catch (...) {
    return PyErr_NoMemory();
  }
}

PyObject* TensorGetDlDtype(PyObject* self, void*) {
  DLDataType dt = AsTensor(self)->t.layout.Dtype();
  return Py_BuildValue("(iii)", static_cast<int>(dt.code), static_cast<int>(dt.bits),
                       static_cast<int>(dt.lanes));
}

// Bits per element (all lanes), as the item size and nbytes count them.
uint64_t ElementBits(const dlbridge::Tensor& t) {
  return uint64_t{t.layout.Dtype().bits} * t.layout.Dtype().lanes;
}

PyObject* TensorGetItemsize(PyObject* self, void*) {
  return PyLong_FromUnsignedLongLong((ElementBits(AsTensor(self)->t) + 7) / 8);
}

// The bytes the elements take (sub-byte elements packed), whatever the strides.
PyObject* TensorGetNbytes(PyObject* self, void*) {
  const dlbridge::Tensor& t = AsTensor(self)->t;
  int64_t count = 0;
  DLB_TRY
  count = t.layout.ElementCount();
  DLB_CATCH(nullptr)
  // Whole bytes of the full groups of 8 elements, then the rest: no intermediate bit count.
  const uint64_t elements = static_cast<uint64_t>(count);
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(elements / 8, ElementBits(t), &bytes)) {
    PyErr_SetString(PyExc_OverflowError, "nbytes: the tensor's byte size passes 2**64");
    return nullptr;
  }
  return PyLong_FromUnsignedLongLong(bytes + ((elements % 8) * ElementBits(t) + 7) / 8);
}

// Tensor.data_ptr(): element zero's address, as torch.Tensor.data_ptr() gives it.
PyObject* TensorDataPtr(PyObject* self, PyObject*) {
  const dlbridge::Tensor& t = AsTensor(self)->t;
  return PyLong_FromUnsignedLongLong(static_cast<uint64_t>(t.descriptor.GetPointer()) +
                                     t.layout.ByteOffset());
}

PyObject* TensorIsContiguous(PyObject* self, PyObject*) {
  return PyBool_FromLong(AsTensor(self)->t.layout.IsContiguous() ? 1 : 0);
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

// PY-38: the device the tensor is on: as given (or imported), else its space's; a GPU space
// without an ordinal asks the export's plan (__dlpack_device__'s answer, or its error).
PyObject* TensorGetDevice(PyObject* self, void*) {
  DLDevice d = AsTensor(self)->t.device;
  if (d.device_type == 0) {
    const DLDeviceType type =
        dlbridge::DefaultDeviceType(AsTensor(self)->t.descriptor.GetMemorySpaceKind());
    const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(type);
    if (row != nullptr && row->id_is_zero) {
      d = DLDevice{type, 0};
    } else {
      DLB_TRY
      d = VersionedPlan(AsTensor(self)).Device();
      DLB_CATCH(nullptr)
    }
  }
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

// The producer stream (see PY-57), None when nothing is pending.
PyObject* TensorGetStream(PyObject* self, void*) {
  const std::optional<int64_t>& stream = AsTensor(self)->t.stream;
  if (!stream.has_value()) Py_RETURN_NONE;
  return PyLong_FromLongLong(*stream);
}

PyObject* TensorGetReadOnly(PyObject* self, void*) {
  return PyBool_FromLong((AsTensor(self)->t.flags & DLPACK_FLAG_BITMASK_READ_ONLY) ? 1 : 0);
}

// PY-5, PY-36: the device of the core's versioned plan, which __dlpack__ emits (and relabels
// only when dl_device asks for (kDLCPU, 0), see PY-10).
PyObject* TensorDlpackDevice(PyObject* self, PyObject*) {
  DLDevice device{};
  DLB_TRY
  device = VersionedPlan(AsTensor(self)).Device();  // the core's answer: what __dlpack__ emits
  DLB_CATCH(nullptr)
  // Consumers that pick a stream ask every producer before each import (PyTorch, CuPy,
  // dlbridge.from_dlpack): host memory's answer is one tuple, made once (tuples are
  // immutable), and the rest skip Py_BuildValue's format parsing.
  if (device.device_type == kDLCPU && device.device_id == 0) {
    static PyObject* cpu = nullptr;  // kept for the process
    if (cpu == nullptr) cpu = Py_BuildValue("(ii)", static_cast<int>(kDLCPU), 0);
    if (cpu == nullptr) return nullptr;
    Py_INCREF(cpu);
    return cpu;
  }
  PyObject* type = PyLong_FromLong(static_cast<long>(device.device_type));
  PyObject* id = type != nullptr ? PyLong_FromLong(static_cast<long>(device.device_id)) : nullptr;
  PyObject* pair = id != nullptr ? PyTuple_Pack(2, type, id) : nullptr;
  Py_XDECREF(type);
  Py_XDECREF(id);
  return pair;
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

PyMethodDef kTensorMethods[] = {
    {"__dlpack__", DLB_METH(TensorDlpack), METH_FASTCALL | METH_KEYWORDS,
     "__dlpack__($self, /, *, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
     "-> PyCapsule. "
     "A 'dltensor_versioned' capsule when max_version[0] >= 1, else a legacy 'dltensor' "
     "(refused for read-only data). Zero-copy unless copy=True or dl_device needs a copy "
     "(host <-> GPU, complete when the capsule is returned; copy=False refuses one)."},
    {"__dlpack_device__", DLB_METH(TensorDlpackDevice), METH_NOARGS,
     "__dlpack_device__($self, /)\n--\n\n-> (device_type, device_id)"},
    {"data_ptr", DLB_METH(TensorDataPtr), METH_NOARGS,
     "data_ptr($self, /)\n--\n\n-> int: the address of element zero (pointer + byte_offset)"},
    {"is_contiguous", DLB_METH(TensorIsContiguous), METH_NOARGS,
     "is_contiguous($self, /)\n--\n\n-> bool: whether the strides are C-contiguous"},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kTensorGetSet[] = {
    {"descriptor", TensorGetDescriptor, nullptr,
     const_cast<char*>("The tensor's MemoryDescriptor (a view: changes apply to the tensor)"),
     nullptr},
    {"dtype", TensorGetDtype, nullptr,
     const_cast<char*>("the dtype's name, e.g. 'float32' (the triple: dl_dtype)"), nullptr},
    {"dl_dtype", TensorGetDlDtype, nullptr, const_cast<char*>("DLPack's (code, bits, lanes)"),
     nullptr},
    {"itemsize", TensorGetItemsize, nullptr,
     const_cast<char*>("bytes per element (all lanes; sub-byte elements round up to 1)"), nullptr},
    {"nbytes", TensorGetNbytes, nullptr,
     const_cast<char*>("bytes the elements take (sub-byte elements packed)"), nullptr},
    {"shape", TensorGetShape, nullptr, const_cast<char*>("tuple of extents"), nullptr},
    {"strides", TensorGetStrides, nullptr, const_cast<char*>("tuple of strides, in elements"),
     nullptr},
    {"ndim", TensorGetNdim, nullptr, const_cast<char*>("number of dimensions"), nullptr},
    {"byte_offset", TensorGetByteOffset, nullptr,
     const_cast<char*>("bytes from the descriptor's pointer to element zero"), nullptr},
    {"device", TensorGetDevice, nullptr,
     const_cast<char*>("(device_type, device_id): as given or imported, else the space's"),
     nullptr},
    {"flags", TensorGetFlags, TensorSetFlags, const_cast<char*>("DLPACK_FLAG_BITMASK_* bits"),
     nullptr},
    {"readonly", TensorGetReadOnly, nullptr, const_cast<char*>("whether FLAG_READ_ONLY is set"),
     nullptr},
    {"stream", TensorGetStream, nullptr,
     const_cast<char*>("the CUDA/ROCm stream the tensor's writes may be pending on (None: none)"),
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot kTensorSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(TensorNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(TensorDealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(TensorTraverse)},
    {Py_tp_clear, reinterpret_cast<void*>(TensorClear)},
    {Py_tp_repr, reinterpret_cast<void*>(TensorRepr)},
    {Py_tp_methods, kTensorMethods},
    {Py_tp_getset, kTensorGetSet},
    {Py_tp_doc,
     const_cast<char*>(
         "Tensor(descriptor, dtype, shape, strides=None, byte_offset=0, device=None, "
         "flags=0, *, allow_unowned=False, stream=None)\n--\n\nA described buffer and its layout. "
         "The "
         "descriptor's hold moves into the tensor (the descriptor keeps its description). "
         "stream: the CUDA/ROCm stream its writes may be pending on; exports order after it. "
         "dtype: a name "
         "('float32'), a NumPy or torch dtype, or (code, bits[, lanes]). Strides are in "
         "elements, not bytes (None = C-contiguous); device (type, id), 'cpu', 'cuda[:N]', "
         "'rocm[:N]', 'hip[:N]' or a torch.device; None = from the space. A tensor that holds "
         "nothing is exported only with allow_unowned=True.")},
    {0, nullptr},
};

}  // namespace

// PY-41: strides that look like NumPy's byte strides (each a multiple of the item size, the item
// size > 1) in a layout that ran out of its buffer get a hint: dlbridge's strides count
// elements. Empty when they do not look so.
static std::string ByteStridesHint(const dlbridge::TensorLayout& layout) {
  const uint64_t itemsize = (uint64_t{layout.Dtype().bits} * layout.Dtype().lanes + 7) / 8;
  if (itemsize <= 1 || layout.Ndim() == 0) return {};
  const dlbridge::IndexSpan shape = layout.Shape();
  const dlbridge::IndexSpan strides = layout.Strides();
  std::string elements;
  bool any = false;
  for (size_t i = 0; i < strides.size; ++i) {
    const int64_t stride = strides.data[i];
    if (shape.data[i] > 1) {
      if (stride == 0 || stride % static_cast<int64_t>(itemsize) != 0) return {};
      any = true;
    }
    elements += (i ? ", " : "") + std::to_string(stride / static_cast<int64_t>(itemsize));
  }
  if (!any) return {};
  if (strides.size == 1) elements += ",";
  return "; dlbridge's strides count elements, not bytes: these are multiples of the item size (" +
         std::to_string(itemsize) + " bytes), so NumPy-style byte strides? In elements: strides=(" +
         elements + ")";
}

void InitTensorObject(PyObject* self) {
  new (&AsTensor(self)->t) dlbridge::Tensor();
  InitTensorFields(self);
}

void InitTensorFields(PyObject* self) {
  PyTensor* tensor = AsTensor(self);
  tensor->plans = nullptr;
  tensor->exports = 0;
  tensor->allow_unowned = false;
  tensor->hold_moved = false;
  tensor->built = true;
}

// PY-11: every export comes from the core's plan of its kind, kept until the description
// changes.
void Invalidate(PyTensor* tensor) noexcept {
  if (tensor->plans == nullptr) return;
  tensor->plans->versioned.reset();
  tensor->plans->legacy.reset();
}

namespace {

// The core's own hold check (see EXP-3) is left open: Python's rule (PY-54) decides, after the
// core's other checks, naming the keyword.
void LeaveHoldToPython(dlbridge::ExportOptions& options) { options.allow_unowned = true; }

}  // namespace

const dlbridge::ExportPlan& PreparePlan(PyTensor* tensor, dlbridge::ExportKind kind) {
  if (tensor->plans == nullptr) {
    void* memory = PyMem_Malloc(sizeof(ExportPlans));
    if (memory == nullptr) throw std::bad_alloc();
    tensor->plans = new (memory) ExportPlans();
  }
  std::optional<dlbridge::ExportPlan>& slot =
      kind == dlbridge::ExportKind::kLegacy ? tensor->plans->legacy : tensor->plans->versioned;
  dlbridge::ExportOptions options;
  LeaveHoldToPython(options);
  // emplace destroys the previous plan first and leaves the slot empty if the new one throws
  // (no reset() before it: GCC 16 -O2 then warns that the destroyed plan may be uninitialised).
  const dlbridge::ExportPlan& plan = [&]() -> const dlbridge::ExportPlan& {
    try {
      return slot.emplace(tensor->t, kind, options);  // the core's checks (see EXP-14)
    } catch (const dlbridge::Error& e) {
      if (e.code() != dlbridge::ErrorCode::kOutOfBounds) throw;
      std::string hint = ByteStridesHint(tensor->t.layout);
      if (hint.empty()) throw;
      // The hint joins the reason; the advice, a value, stays the error's (see PY-42).
      throw dlbridge::Error(e.code(), e.reason() + hint, e.advice(), e.advice_detail());
    }
  }();
  // PY-54: exporting memory nothing holds is a deliberate choice.
  if (!tensor->allow_unowned && !tensor->t.descriptor.HasOwnership()) {
    slot.reset();
    // As the core's errors are: BufferError with `code`, the core's name for this refusal.
    PyObject* exc = PyObject_CallFunction(
        PyExc_BufferError, "s",
        "export of a dlbridge.Tensor whose descriptor holds nothing (no owner, no release): "
        "nothing would keep the memory valid while the export lives; give it a hold "
        "(SetOwner(obj) or SetReleaseAddress, on the MemoryDescriptor or on Tensor.descriptor) "
        "or build the Tensor with allow_unowned=True if the memory outlives every export");
    if (exc != nullptr) {
      PyObject* code = PyUnicode_FromString("kNoHold");
      if (code == nullptr || PyObject_SetAttr(exc, g_str_code, code) != 0) PyErr_Clear();
      Py_XDECREF(code);
      PyErr_SetObject(PyExc_BufferError, exc);
      Py_DECREF(exc);
    }
    throw PythonErrorSet{};
  }
  return plan;
}

// PY-50: counted by ExportSelf and the deleters (dlpack_export.cpp).
bool CheckNoLiveExports(PyTensor* tensor, const char* what) {
  const Py_ssize_t live = tensor->exports;
  if (live == 0) return true;
  PyErr_Format(PyExc_BufferError,
               "%s through Tensor.descriptor: %zd live export(s) of this tensor (capsules or "
               "exchange-API tensors not yet deleted) rely on its hold, which cannot be moved, "
               "replaced or cleared until their consumers delete them",
               what, live);
  return false;
}

PyType_Spec kTensorSpec = {"dlbridge.Tensor", sizeof(PyTensor), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
                           kTensorSlots};

}  // namespace dlbpy
