// What the files of the `dlbridge` Python module (dlbridge._dlbridge) share: the object
// layouts, the interned names and types created at import, the error helpers, the argument
// helpers and each file's entry points. Written against the CPython C API directly (no
// binding library), so that the DLPack exchange paths cost about what NumPy's own do, and on
// dlbridge/python.h's primitives (capsule names, the capsule destructor, the rename before a
// consuming import, the per-type cache), inlined here as in C++ extensions.
//
// The files, one job each (spec/python.md gives every rule with its test):
//   module.cpp            PyInit__dlbridge: interned names, the module's method table,
//                         type registration, constants and message lists from the device table
//   errors.cpp            dlbridge::Error and other C++ exceptions -> Python exceptions, the
//                         Python advice by error code
//   args.cpp              Python arguments -> C++ values (ints, addresses, shapes, dtypes)
//   descriptor_type.cpp   dlbridge.MemoryDescriptor; Python owners held from C++
//   python_entry.cpp      entering Python from any thread, and the shutdown hook (see PY-52)
//   tensor_type.cpp       dlbridge.Tensor: construction, attributes, __dlpack_device__, its
//                         export plans
//   dlpack_export.cpp     __dlpack__, stream rules, capsules (hot: one translation unit)
//   copies.cpp            the copies of __dlpack__ and from_dlpack: the core's CopyTo, with
//                         their streams
//   dlpack_import.cpp     dlbridge.from_dlpack (through __dlpack__ only, with device/copy),
//                         capsule import, legacy producers (hot: one translation unit)
//   exchange_api.cpp      the DLPack 1.3 C exchange table published on dlbridge.Tensor
//   streams.cpp           stream values, producer streams, the ordering of exports and
//                         imports, the current stream per device
//   checker_bindings.cpp  _check_capsule, _checker_rules, _device_table (dlbridge.check)
//
// Threads and finalisation: every release and deleter dlbridge installs that touches Python
// enters it through PythonEntry (PyGILState_Ensure), so it may run on any thread at any time.
// From interpreter shutdown on (an atexit hook, which waits for the threads already inside)
// it leaks on purpose instead: PyGILState_Ensure once finalisation has begun ends the thread
// with a forced unwind, which a noexcept deleter frame turns into std::terminate (see PY-52).
#pragma once

// Python.h first, as CPython asks (it may set macros the standard headers read); then every
// standard header the module's files use, so each file includes only this one.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlpack/dlpack.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlbridge/device_copy.h"
#include "dlbridge/dlbridge.h"
#include "dlbridge/python.h"

#if !defined(_WIN32)
#include <pthread.h>
#endif

// The exchange API's table (see PY-18) where the DLPack header has it: python.h's condition.
#define DLBRIDGE_PY_EXCHANGE_API DLBRIDGE_PYTHON_EXCHANGE_API

namespace dlbpy {

// The Python DLPack protocol's capsule names, the capsule destructor, the rename-then-consume
// step and the per-type cache are dlbridge/python.h's (see PYH-2, see PYH-4, see PYH-5): the module
// is built on that header's primitives, inline on its hot paths, and defines none of its own.
using dlbridge::python::detail::CapsuleKind;
using dlbridge::python::detail::KindOfCapsule;
namespace pyh = dlbridge::python::detail;

// Interned strings, constant objects and the two types, created once by PyInit__dlbridge
// (module.cpp).
extern PyObject* g_str_dlpack;                  // "__dlpack__"
extern PyObject* g_str_dlpack_device;           // "__dlpack_device__"
extern PyObject* g_str_exchange_api;            // "__dlpack_c_exchange_api__"
extern PyObject* g_str_stream;                  // "stream"
extern PyObject* g_str_max_version;             // "max_version"
extern PyObject* g_str_dl_device;               // "dl_device"
extern PyObject* g_str_copy;                    // "copy"
extern PyObject* g_str_device;                  // "device"
extern PyObject* g_str_value;                   // "value"
extern PyObject* g_str_code;                    // "code"
extern PyObject* g_kwnames_max_version;         // ("max_version",)
extern PyObject* g_max_version;                 // (1, DLPACK_MINOR_VERSION)
extern PyObject* g_kwnames_all;                 // ("max_version", "dl_device", "copy")
extern PyObject* g_kwnames_device_copy;         // ("dl_device", "copy")
extern PyObject* g_kwnames_all_stream;          // ("max_version", "dl_device", "copy", "stream")
extern PyObject* g_kwnames_max_version_stream;  // ("max_version", "stream")
extern PyObject* g_kwnames_stream;              // ("stream",)
extern PyObject* g_enum_type;                   // enum.Enum
extern PyTypeObject* g_descriptor_type;
extern PyTypeObject* g_tensor_type;

// ---- The objects ----

// A dlbridge.MemoryDescriptor: its own descriptor, or a view of a dlbridge.Tensor's.
// Both types take part in garbage collection (see PY-53): a Python owner (SetOwner) may refer
// back to the tensor or descriptor holding it.
struct PyDescriptor {
  PyObject_HEAD dlbridge::MemoryDescriptor own;  // used when this object owns its descriptor
  dlbridge::MemoryDescriptor* d;                 // &own, or the descriptor inside `base`
  PyObject* base;                                // the dlbridge.Tensor viewed, or null
  bool consumed;  // its hold moved into a Tensor and none was set since (see PY-55; views: base's)
};

// The core's ExportPlans of one dlbridge.Tensor, one per kind, each prepared at the first
// export of its kind and emitted from until the description changes (descriptor setters
// through Tensor.descriptor, Tensor.flags: Invalidate); the layout never changes. Out of line
// (one pymalloc block, made at the first export), so that a Tensor stays small.
struct ExportPlans {
  std::optional<dlbridge::ExportPlan> versioned;  // ToDLPackVersioned's checks passed
  std::optional<dlbridge::ExportPlan> legacy;     // ToDLPack's checks passed
};

// A dlbridge.Tensor.
struct PyTensor {
  PyObject_HEAD dlbridge::Tensor t;
  ExportPlans* plans;  // null until the first export
  // Zero-copy exports not yet deleted (capsules, exchange-API tensors): each keeps this
  // object alive and relies on its hold (see PY-50). Changed and read only with the GIL held
  // (by the export, and by its deleter once it has entered Python): a plain count.
  Py_ssize_t exports;
  bool allow_unowned;  // Tensor(..., allow_unowned=True): hold-less exports allowed (see PY-54)
  bool hold_moved;     // its hold moved into another Tensor through a view (see PY-55)
  // Its fields are constructed (InitTensorFields). False (tp_alloc's zeroes) while an import
  // builds the tensor in place: the cycle collector, which a failing import's deleter may
  // run, then skips the object.
  bool built;
};

inline PyDescriptor* AsDescriptor(PyObject* self) { return reinterpret_cast<PyDescriptor*>(self); }
inline PyTensor* AsTensor(PyObject* self) { return reinterpret_cast<PyTensor*>(self); }
// Whether a descriptor object's hold moved into a Tensor and none was set since: its own
// mark, or for a view the viewed tensor's (each Tensor.descriptor is a new view object).
inline bool& ConsumedMark(PyDescriptor* d) {
  return d->base != nullptr ? AsTensor(d->base)->hold_moved : d->consumed;
}

// ---- Device type lists for messages (module.cpp), from the device table ----

// "kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged": the host-accessible types.
const char* HostAccessibleTypeNames();
// The device types of a stream family (kCuda or kRocm), e.g. "kDLROCM, kDLROCMHost".
const char* StreamTypeNames(dlbridge::StreamFamily family);

// ---- Errors (errors.cpp) ----

// The Python exception type for an ErrorCode (spec/python.md, "Errors").
PyObject* ExceptionFor(dlbridge::ErrorCode code);
// The Python message of a dlbridge::Error (see PY-42): its reason, then its advice (a value,
// Error::advice()) in Python's words, e.g. "ask with max_version=(1, 0)" where C++ says "use
// ToDLPackVersioned".
std::string PythonMessage(const dlbridge::Error& error);
// Sets the Python exception for a dlbridge::Error: the message with Python advice
// (PythonMessage), and the ErrorCode's name as the exception's `code` attribute.
void SetError(const dlbridge::Error& e);
// Converts whatever a C++ call threw into the Python exception; call it in a catch block.
void SetCurrentException();
// dlbridge._python_advice(): [(advice name, C++ wording, Python wording)] for every advice.
PyObject* PythonAdviceList(PyObject* module, PyObject* unused);
// dlbridge._raise_error(code, reason, advice, detail): raises what a dlbridge::Error of those
// values becomes (tests: the advice attaches whatever the reason says).
PyObject* RaiseError(PyObject* module, PyObject* args);

// Thrown by C++ code that has already set the Python exception.
struct PythonErrorSet {};

#define DLB_TRY try {
#define DLB_CATCH(result)                  \
  }                                        \
  catch (const ::dlbpy::PythonErrorSet&) { \
    return result;                         \
  }                                        \
  catch (...) {                            \
    ::dlbpy::SetCurrentException();        \
    return result;                         \
  }

// Saves the error indicator (a pending exception) for its lifetime and restores it, so that
// user callbacks run by deallocs and deleters neither see nor lose it (python.h's KeptError).
// PY-51: every dealloc, release and capsule destructor of the module runs in one.
using SavedException = pyh::KeptError;

#define DLB_METH(fn) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn))

// Which of `names` (interned) the keyword `key` is, -1 for none. Hot (every __dlpack__ and
// from_dlpack with keywords): callers' keyword names are interned almost always (CPython
// interns those of calls written in Python, NumPy and PyTorch pass interned ones), so every
// name is tried by identity before any is compared by value.
template <size_t N>
inline int KeywordIndex(PyObject* key, PyObject* const (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    if (key == names[i]) return static_cast<int>(i);
  }
  for (size_t i = 0; i < N; ++i) {
    if (PyUnicode_Compare(key, names[i]) == 0) return static_cast<int>(i);
  }
  return -1;
}

// The keyword arguments of a vectorcall (`kwnames`, their values from `values` on) into the
// slots of their names (KeywordIndex); false with TypeError naming `function` for a name it
// does not take.
template <size_t N>
inline bool ReadKeywords(PyObject* kwnames, PyObject* const* values, PyObject* const (&names)[N],
                         PyObject** const (&slots)[N], const char* function) {
  const Py_ssize_t n = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    const int which = KeywordIndex(key, names);
    if (which < 0) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", function, key);
      return false;
    }
    *slots[which] = values[i];
  }
  return true;
}

// The array API's copy argument is None, True or False: else TypeError naming `function`.
inline bool CheckCopyArgument(PyObject* copy, const char* function) {
  if (copy == Py_None || PyBool_Check(copy)) return true;
  PyErr_Format(PyExc_TypeError, "%s: copy must be None, True or False, not %.100R", function, copy);
  return false;
}

// ---- Arguments (args.cpp; ToIntPair inline: the hot paths parse with it) ----

bool ToInt64(PyObject* value, const char* what, int64_t* out);
// An address: any int in [INT64_MIN, UINT64_MAX] (values above INT64_MAX wrap, as C would).
bool ToAddress(PyObject* value, const char* what, int64_t* out);
const char* ToUtf8(PyObject* value, const char* what);
bool ToInt64Vector(PyObject* value, const char* what, std::vector<int64_t>* out);
PyObject* Int64Tuple(const int64_t* values, size_t n);
// A dtype: a name the core's ParseDtype accepts ("float32", "bool", "float32x4", ...), or a
// tuple (code, bits[, lanes]).
bool ToDtype(PyObject* value, DLDataType* out);

// ToIntPair's slow path (args.cpp): items that are not ints but have __index__ (IntEnum, NumPy
// integers) or are an enum.Enum whose value is an int (see PY-43).
bool ToIntPairSlow(PyObject* value, const char* what, int64_t* first, int64_t* second);

// A tuple of exactly two integers. Hot (every __dlpack__ with max_version parses one): exact
// ints take the fast path; anything else goes to ToIntPairSlow.
inline bool ToIntPair(PyObject* value, const char* what, int64_t* first, int64_t* second) {
  if (PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 2 &&
      PyLong_CheckExact(PyTuple_GET_ITEM(value, 0)) &&
      PyLong_CheckExact(PyTuple_GET_ITEM(value, 1))) {
    long long a = PyLong_AsLongLong(PyTuple_GET_ITEM(value, 0));
    if (a == -1 && PyErr_Occurred()) return false;
    long long b = PyLong_AsLongLong(PyTuple_GET_ITEM(value, 1));
    if (b == -1 && PyErr_Occurred()) return false;
    *first = a;
    *second = b;
    return true;
  }
  return ToIntPairSlow(value, what, first, second);
}

// A device argument (see PY-64: dl_device, device=, Tensor(device=), current_stream's device): a
// (device_type, device_id) pair of integers (see PY-43), or a spelling users type: "cpu", "cuda",
// "cuda:N", "rocm"/"hip" (kDLROCM), "rocm:N"/"hip:N", or a torch.device-like object (a str
// `.type` among those names and an int-or-None `.index`). The one place devices are read.
// TypeError for an argument of no such form, ValueError for an unknown name or values outside
// a DLDevice (type in 0..INT32_MAX, id in int32) or a non-zero id of a type whose id is always
// 0 (kDLCPU), each naming `what`, the value and the forms.
bool ToDeviceSlow(PyObject* value, const char* what, DLDevice* out);

// ToDeviceSlow's fast path, inline for __dlpack__(dl_device=...): a tuple of two exact ints.
inline bool ToDevice(PyObject* value, const char* what, DLDevice* out) {
  if (PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 2 &&
      PyLong_CheckExact(PyTuple_GET_ITEM(value, 0)) &&
      PyLong_CheckExact(PyTuple_GET_ITEM(value, 1))) {
    int overflow = 0;
    const long long type = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(value, 0), &overflow);
    const long long id =
        overflow == 0 ? PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(value, 1), &overflow) : 0;
    // A non-zero id takes the slow path, which refuses it for a type whose id is always 0.
    if (overflow == 0 && type >= 0 && type <= INT32_MAX && id == 0) {
      *out = DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)};
      return true;
    }
  }
  return ToDeviceSlow(value, what, out);
}

// ---- Entering Python from any thread (python_entry.cpp) ----

// Shutdown (see PY-52): entries of threads that held the GIL already (read and changed only
// with the GIL held), and whether the atexit hook ran.
extern long g_in_python_holding;
extern std::atomic<bool> g_shutting_down;

// Whether this thread holds the GIL (is attached to the interpreter). Not PyGILState_Check,
// which answers 1 for every thread once a sub-interpreter exists.
inline bool HoldsGil() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked() != nullptr;  // this thread's own, attached or NULL
#elif PY_VERSION_HEX >= 0x030C0000
  return _PyThreadState_UncheckedGet() != nullptr;  // thread-local from 3.12 on
#else
  // 3.11: the current thread state is the process's; compare it with this thread's own.
  PyThreadState* mine = PyGILState_GetThisThreadState();
  return mine != nullptr && mine == _PyThreadState_UncheckedGet();
#endif
}

// Enters Python from any thread for its lifetime (see PY-52): entered() is true with the GIL held,
// false from interpreter shutdown on, when the caller must leak what it would have dropped.
// Every entry counts itself in (the atexit hook waits for the count). A thread that holds the
// GIL already (a deleter run by a capsule's destructor: the common case, every export's end)
// does not take it again: that path is inline, since it is half of every exchange's deleter;
// the others take it with PyGILState_Ensure, out of line.
class PythonEntry {
 public:
  PythonEntry() noexcept {
    if (!HoldsGil()) {
      EnterTakingGil();
      return;
    }
    // Counted in all the same, since what runs inside (a DECREF reaching a __del__) may hand
    // the GIL to the hook's thread, which must then wait for this one to leave. The hook runs
    // with the GIL: no race with the check. Only the hook's flag is read: a thread that holds
    // the GIL may drop references during finalisation, as finalisation itself does.
    if (g_shutting_down.load(std::memory_order_relaxed)) return;
    ++g_in_python_holding;
    entered_ = true;
  }
  ~PythonEntry() {
    if (!entered_) return;
    if (took_) {
      LeaveReleasingGil();
      return;
    }
    --g_in_python_holding;  // the GIL is held again here, whatever ran inside
  }
  PythonEntry(const PythonEntry&) = delete;
  PythonEntry& operator=(const PythonEntry&) = delete;
  bool entered() const noexcept { return entered_; }

 private:
  void EnterTakingGil() noexcept;
  void LeaveReleasingGil() noexcept;

  PyGILState_STATE state_{};
  bool entered_ = false;
  bool took_ = false;  // PyGILState_Ensure'd: released by the destructor
};
// Registers the atexit hook after which PythonEntry refuses (module init); -1 on error.
int InstallShutdownHook();
// Drops a reference on any thread, taking the GIL; leaks it from shutdown on.
void DecRefAnyThread(PyObject* object) noexcept;

// ---- dlbridge.MemoryDescriptor (descriptor_type.cpp) ----

extern PyType_Spec kDescriptorSpec;
// The Python object a descriptor's owner hold keeps (SetOwner), when that hold is the only
// reference to it that C++ has; else null. Borrowed.
PyObject* SolePythonOwner(const dlbridge::MemoryDescriptor& d);
// The tensor's hold cannot change while exports rely on it: sets BufferError naming them and
// returns false (`what` names the call).
bool CheckNoLiveExports(PyTensor* tensor, const char* what);
// A MemoryDescriptor object viewing `tensor`'s own descriptor (Tensor.descriptor).
PyObject* DescriptorView(PyObject* tensor);
// The descriptor of a MemoryDescriptor object that is about to change: a tensor it belongs
// to prepares its exports again.
dlbridge::MemoryDescriptor* Mutable(PyObject* self);

// ---- dlbridge.Tensor (tensor_type.cpp) ----

extern PyType_Spec kTensorSpec;
// Constructs the fields of a PyTensor fresh from tp_alloc: an empty tensor, no plans, no
// exports, hold-less exports refused (every constructor of Tensor objects calls it).
void InitTensorObject(PyObject* self);
// Everything of a new Tensor object but its tensor, for a caller that constructs `t` in place
// (the import: FromDLPack's result, without a default tensor and a move).
void InitTensorFields(PyObject* self);
// The tensor's description changed: its exports are prepared again.
void Invalidate(PyTensor* tensor) noexcept;
// Prepares (and keeps) the tensor's plan of `kind`; throws the core's Error when the tensor
// cannot be exported so.
const dlbridge::ExportPlan& PreparePlan(PyTensor* tensor, dlbridge::ExportKind kind);

// The tensor's plans: the kept one, else PreparePlan's (throws).
inline const dlbridge::ExportPlan& VersionedPlan(PyTensor* tensor) {
  if (tensor->plans != nullptr && tensor->plans->versioned) return *tensor->plans->versioned;
  return PreparePlan(tensor, dlbridge::ExportKind::kVersioned);
}
inline const dlbridge::ExportPlan& LegacyPlan(PyTensor* tensor) {
  if (tensor->plans != nullptr && tensor->plans->legacy) return *tensor->plans->legacy;
  return PreparePlan(tensor, dlbridge::ExportKind::kLegacy);
}

// ---- Export and capsules (dlpack_export.cpp) ----

// Tensor.__dlpack__(*, stream, max_version, dl_device, copy).
PyObject* TensorDlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
// A zero-copy versioned export of a dlbridge.Tensor (the exchange API's); throws.
DLManagedTensorVersioned* ExportVersioned(PyObject* tensor);
// Empties the stack of recycled export blocks (a forked child's, see PY-67); they leak.
void ForgetRecycledBlocks() noexcept;

// ---- Copies (copies.cpp) ----

// Whether `t`'s data on `source` reach `target` as the same bytes relabelled (kDLCPU, 0):
// host-accessible memory (pinned, managed) with no write pending on a stream (see PY-10).
bool ReachesHostWithoutCopy(const dlbridge::Tensor& t, DLDevice source, DLDevice target);

// A copy of what `plan` (of `source`) describes into new C-contiguous memory on `target`,
// complete when it returns (see PY-65): the core's CopyTo, ordered after `source.stream` and
// queued on `consumer` (the stream the consumer will use the copy on, of target's runtime) when
// given.
// Throws the core's Error (BufferError for a device or runtime it cannot use).
dlbridge::Tensor CopyPlanTo(const dlbridge::Tensor& source, const dlbridge::ExportPlan& plan,
                            DLDevice target, std::optional<int64_t> consumer);

// ---- Import (dlpack_import.cpp) ----

// dlbridge.from_dlpack(x, /, *, device=None, copy=None, stream=None).
PyObject* FromDlpack(PyObject* module, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames);
// Imports an owning versioned tensor (always consumed) into a new dlbridge.Tensor.
PyObject* ImportManaged(DLManagedTensorVersioned* m);

// ---- Streams (streams.cpp) ----

// The stream convention of each device type is the device table's (dlbridge::StreamFamilyOf,
// see DEV-5). The protocol's meaning of stream=None on a device type whose streams are ordered:
// the table's default_stream (CUDA 1, the legacy default stream; ROCm 0, the null stream).
int64_t DefaultStream(int32_t device_type) noexcept;
// A stream argument: an int (bool refused: TypeError) within int64 (else ValueError).
bool ToStreamValue(PyObject* value, const char* what, int64_t* out);
// The core's CheckStreamValue for `device`: ValueError (code kInvalidArgument) on refusal.
bool CheckStreamFor(DLDevice device, int64_t stream, const char* what);
// Tensor(..., stream=value): the producer stream of memory `descriptor` on `device` (type 0:
// the space's), checked; None gives an empty *out. False with a Python exception set.
bool ParseProducerStream(PyObject* value, DLDevice device,
                         const dlbridge::MemoryDescriptor& descriptor, std::optional<int64_t>* out);
// __dlpack__'s ordering: the consumer's stream (`stream`, checked; `consumer` its value when not
// None) after the tensor's producer stream, on device `source`, exported as `target`. False
// with a Python exception set (BufferError for a driver failure, naming the call).
bool OrderExport(const dlbridge::Tensor& t, DLDevice source, DLDevice target, PyObject* stream,
                 int64_t consumer);
// from_dlpack's stream for a producer whose data the consumer will use on `consumer`:
// *pass says whether to pass one, *value which. False with a Python exception set.
bool ImportStream(PyObject* explicitStream, DLDevice consumer, bool* pass, int64_t* value);
// The current stream of a CUDA or ROCm device (set_current_stream's, else the default). Throws
// only what a failed lock throws.
int64_t CurrentStream(DLDevice device);
// current_work_stream's answer: the current stream as a handle; NULL for devices without
// streams (and ROCm's null stream).
void* CurrentWorkStreamHandle(int32_t deviceType, int32_t deviceId) noexcept;
// dlbridge.current_stream(device) and dlbridge.set_current_stream(device, stream).
PyObject* PyCurrentStream(PyObject* module, PyObject* device);
PyObject* PySetCurrentStream(PyObject* module, PyObject* const* args, Py_ssize_t nargs);

// ---- The exchange API (exchange_api.cpp) ----

#if DLBRIDGE_PY_EXCHANGE_API
extern DLPackExchangeAPI g_exchange_api;
#endif

// ---- The conformance checker (checker_bindings.cpp) ----

// dlbridge._check_capsule(capsule).
PyObject* CheckCapsule(PyObject* module, PyObject* capsule);
// dlbridge._checker_rules().
PyObject* CheckerRulesList(PyObject* module, PyObject* unused);
// dlbridge._device_table(): the core's device table, for dlbridge.check.
PyObject* DeviceTableList(PyObject* module, PyObject* unused);

}  // namespace dlbpy
