// Export (hot): Tensor.__dlpack__ with the array API's argument and stream rules, emissions
// of the tensor's ExportPlans, the host copy, and the capsules (dlbridge/python.h's). One
// translation unit, so that the whole path from __dlpack__ to PyCapsule_New inlines.
#include "py_internal.h"

namespace dlbpy {
namespace {

// The keep-alive of an emission: the reference to the dlbridge.Tensor (any thread).
void DropTensorRef(void* object) noexcept { DecRefAnyThread(static_cast<PyObject*>(object)); }

// PY-67: the blocks of exports (the managed tensor, its keep-alive and its dims: 104 or 120
// bytes and 16 per dimension) are recycled, since every exchange makes one and frees one.
// Blocks of up to kPooledBytes (every export of up to 8 dimensions) go back to a stack of
// kPoolSize once their export ends and are handed out again before the C heap is asked;
// larger ones, and those the full stack refuses, come from and go back to the C heap (never
// Python's allocator: a block may outlive the interpreter that made it). A header before
// each block says which kind it is. The stack is touched only with the GIL held (an export,
// and the end of one once inside Python), so it takes no lock; from shutdown on, ends leak
// their blocks (see PY-52). A free-threaded build, whose GIL a user may keep off, has no
// stack.
class BlockPool {
 public:
  static constexpr size_t kPooledBytes = 256;
#ifdef Py_GIL_DISABLED
  static constexpr size_t kPoolSize = 0;
#else
  static constexpr size_t kPoolSize = 16;
#endif

  void* Allocate(size_t bytes) noexcept {
    const bool pooled = kPoolSize > 0 && bytes <= kPooledBytes;
    if (pooled && count_ > 0) return Block(free_[--count_]);
    auto* memory =
        static_cast<Header*>(std::malloc(sizeof(Header) + (pooled ? kPooledBytes : bytes)));
    if (memory == nullptr) return nullptr;  // the core reports it (kOutOfMemory)
    memory->pooled = pooled;
    return Block(memory);
  }

  void Free(void* block) noexcept {
    Header* memory = static_cast<Header*>(block) - 1;
    if (memory->pooled && count_ < kPoolSize) {
      free_[count_++] = memory;
      return;
    }
    std::free(memory);
  }

  // A forked child may have been forked while another thread was half way through the
  // stack: it starts with an empty one (the blocks leak).
  void Forget() noexcept { count_ = 0; }

 private:
  struct alignas(16) Header {  // keeps the block as aligned as malloc's memory
    bool pooled;
  };
  static void* Block(Header* memory) noexcept { return memory + 1; }

  Header* free_[kPoolSize > 0 ? kPoolSize : 1] = {};
  size_t count_ = 0;
};

BlockPool g_blocks;  // the GIL guards it

void* AllocateBlock(size_t bytes) noexcept { return g_blocks.Allocate(bytes); }

// PY-12: ends an emission (its deleter may run on any thread, with the GIL or without it):
// takes the GIL once to give the block back and drop the tensor reference (the keep-alive);
// from interpreter shutdown on both are leaked on purpose (see PY-52).
void EndExport(void* block, dlbridge::KeepAlive keepAlive) noexcept {
  auto* tensor = static_cast<PyObject*>(keepAlive.context);
  const PythonEntry python;
  if (!python.entered()) return;  // from shutdown on: leaked, and nothing reads the count
  if (tensor != nullptr) {
    --AsTensor(tensor)->exports;  // one export fewer relies on the hold (see PY-50)
  }
  g_blocks.Free(block);  // before the DECREF, which may run other exports' ends
  Py_XDECREF(tensor);    // the tensor lives until here
}

constexpr dlbridge::ExportAllocator kPyAllocator{&AllocateBlock, &EndExport};

// Zero-copy export of a dlbridge.Tensor: an emission of the tensor's plan of that kind
// (tensor_type.cpp, see PY-11); the legacy plan refuses read-only data (PY-8). A legacy
// export takes the versioned plan's checks first, so that a tensor failing one of them and a
// legacy-only check too gets one error whatever the call asks. Every emission keeps the
// Python object alive, so the tensor's own hold is dropped only once the object and every
// export are gone.
template <class Managed>
Managed* ExportSelf(PyObject* object) {
  PyTensor* self = AsTensor(object);
  const dlbridge::KeepAlive keepAlive{&DropTensorRef, object};
  Managed* m = nullptr;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    m = VersionedPlan(self).EmitVersioned(keepAlive, kPyAllocator);
  } else {
    VersionedPlan(self);
    m = LegacyPlan(self).EmitLegacy(keepAlive, kPyAllocator);
  }
  Py_INCREF(object);  // the emission holds it from here on (its deleter drops it)
  ++self->exports;    // one more relies on the hold (see PY-50)
  return m;
}

// The capsule of a zero-copy export of the kind asked for (python.h's ToCapsule, see PYH-2:
// its one destructor deletes only an unconsumed capsule, see PY-13; a capsule that cannot be
// made runs the deleter at once), relabelled (kDLCPU, 0) for a host view (PY-10). Throws.
[[gnu::always_inline]] inline PyObject* ExportOwnCapsule(PyObject* self, bool versioned,
                                                         bool hostView) {
  using dlbridge::python::ToCapsule;
  if (versioned) {
    DLManagedTensorVersioned* m = ExportSelf<DLManagedTensorVersioned>(self);
    if (hostView) m->dl_tensor.device = DLDevice{kDLCPU, 0};
    return ToCapsule(m);
  }
  DLManagedTensor* m = ExportSelf<DLManagedTensor>(self);
  if (hostView) m->dl_tensor.device = DLDevice{kDLCPU, 0};
  return ToCapsule(m);
}

// PY-9: the array API's stream rules for the device the consumer will use: the core's
// CheckStreamValue (see STR-1), ValueError on refusal. *value is the stream when not None.
bool CheckStream(PyObject* stream, DLDevice device, int64_t* value) {
  if (stream == Py_None) return true;
  if (!ToStreamValue(stream, "__dlpack__: stream", value)) return false;
  return CheckStreamFor(device, *value, "__dlpack__: stream");
}

// An export asked for a device, a copy or a stream, or of a tensor with writes
// pending: the array API's rules for them, then the emission or the copy. Out of line, so
// that the common export (TensorDlpack's own) carries none of its frame (see PY-9, PY-10).
[[gnu::noinline]] PyObject* ExportByRules(PyObject* self, bool versioned, PyObject* stream,
                                          PyObject* dlDevice, PyObject* copy) {
  using dlbridge::python::ToCapsule;
  // dl_device is read before the plan is taken: its items' __index__ (user code) may change
  // the tensor, which prepares its plans again (Invalidate) and would leave `plan` dangling.
  DLDevice asked{};
  if (dlDevice != Py_None && !ToDevice(dlDevice, "__dlpack__: dl_device", &asked)) {
    return nullptr;  // see PY-64
  }
  const dlbridge::Tensor& t = AsTensor(self)->t;
  const dlbridge::ExportPlan* plan = nullptr;  // the core's checks and device, for any kind
  DLB_TRY
  plan = &VersionedPlan(AsTensor(self));
  DLB_CATCH(nullptr)
  const DLDevice source = plan->Device();
  const DLDevice target = dlDevice != Py_None ? asked : source;
  // PY-10: dl_device and copy. Host-accessible memory (pinned, managed) is one memory with the
  // host: to (kDLCPU, 0) it is the same bytes, exported as kDLCPU. Any other device is reached
  // by a copy (see PY-65), which copy=False refuses; copy=True always copies.
  const bool sameDevice =
      target.device_type == source.device_type && target.device_id == source.device_id;
  // (out of line: asked only when the device changes, off the hot path of own-device exports)
  const bool hostView = !sameDevice && ReachesHostWithoutCopy(t, source, target);
  const bool needCopy = copy == Py_True || (!sameDevice && !hostView);
  if (needCopy && copy == Py_False) {
    PyErr_Format(PyExc_BufferError,
                 "__dlpack__: copy=False, but dl_device (%d, %d) needs a copy of this %s memory "
                 "on device (%d, %d): only host-accessible memory (%s) reaches (kDLCPU, 0) "
                 "without one; pass copy=None to allow the copy",
                 static_cast<int>(target.device_type), static_cast<int>(target.device_id),
                 t.descriptor.GetMemorySpace(), static_cast<int>(source.device_type),
                 static_cast<int>(source.device_id), HostAccessibleTypeNames());
    return nullptr;
  }
  int64_t consumer = 0;
  if (!CheckStream(stream, target, &consumer)) return nullptr;
  // A copy is ordered after the tensor's pending writes by the copy itself (see PY-65); only a
  // zero-copy export orders the consumer's stream here, before any emission.
  if (!needCopy && !OrderExport(t, source, target, stream, consumer)) return nullptr;
  DLB_TRY
  if (needCopy) {
    dlbridge::Tensor copied = CopyPlanTo(
        t, *plan, target, stream == Py_None ? std::nullopt : std::optional<int64_t>(consumer));
    if (versioned) {
      DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(copied));
      m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      return ToCapsule(m);
    }
    return ToCapsule(dlbridge::ToDLPack(std::move(copied)));
  }
  return ExportOwnCapsule(self, versioned, hostView);
  DLB_CATCH(nullptr)
}

}  // namespace

PyObject* TensorDlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  // PY-7: arguments of the wrong Python type raise TypeError.
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
  if (kwnames != nullptr) {  // (NumPy 1.x passes none: the tables are not built then)
    PyObject* const names[] = {g_str_stream, g_str_max_version, g_str_dl_device, g_str_copy};
    PyObject** const slots[] = {&stream, &maxVersion, &dlDevice, &copy};
    if (!ReadKeywords(kwnames, args, names, slots, "__dlpack__")) return nullptr;
  }
  bool versioned = false;  // PY-6: max_version selects the capsule
  if (maxVersion != Py_None) {
    int64_t major = 0;
    int64_t minor = 0;
    if (!ToIntPair(maxVersion, "__dlpack__: max_version", &major, &minor)) return nullptr;
    versioned = major >= 1;
  }
  if (!CheckCopyArgument(copy, "__dlpack__")) return nullptr;
  // What most consumers ask (NumPy 1 passes nothing; NumPy 2 max_version, dl_device=None and
  // copy=None): no device, no copy, no stream, and no writes pending. The rules below then
  // decide nothing (the target is the source: no copy, no host view, no stream to check or
  // order), so the export is the emission of the kind asked for, whose plan makes the checks.
  if (dlDevice == Py_None && copy != Py_True && stream == Py_None &&
      !AsTensor(self)->t.stream.has_value()) {
    DLB_TRY
    return ExportOwnCapsule(self, versioned, false);
    DLB_CATCH(nullptr)
  }
  return ExportByRules(self, versioned, stream, dlDevice, copy);
}

void ForgetRecycledBlocks() noexcept { g_blocks.Forget(); }

DLManagedTensorVersioned* ExportVersioned(PyObject* tensor) {
  return ExportSelf<DLManagedTensorVersioned>(tensor);
}

}  // namespace dlbpy
