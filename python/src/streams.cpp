// Streams, the Python side of the core's stream ordering (dlbridge/runtime.h, spec/streams.md):
// stream values read from Python, the producer stream a Tensor carries, the ordering of
// Tensor.__dlpack__, the stream from_dlpack passes to a producer, and the current stream per
// device (dlbridge.current_stream / set_current_stream, the exchange API's current_work_stream).
#include "py_internal.h"

namespace dlbpy {

using dlbridge::OrdersStreams;
using dlbridge::StreamFamily;
using dlbridge::StreamFamilyOf;  // the device table's column (see DEV-5)

int64_t DefaultStream(int32_t device_type) noexcept {
  // The Python protocol's None: the device table's default_stream column (CUDA's legacy default
  // stream 1, ROCm's null stream 0).
  const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(device_type);
  return row != nullptr ? row->default_stream : -1;
}

bool ToStreamValue(PyObject* value, const char* what, int64_t* out) {
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be None or an int, not %.100s", what,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (v == -1 && PyErr_Occurred()) return false;
  if (overflow != 0) {
    // The core takes stream values as int64 (Tensor::stream, OrderStreams): a handle above
    // 2**63 cannot be passed on, and a value below -1 is illegal on every device anyway.
    PyErr_Format(PyExc_ValueError,
                 "%s %R is out of range: stream values are 64-bit signed integers (a stream "
                 "handle is below 2**63)",
                 what, value);
    return false;
  }
  *out = static_cast<int64_t>(v);
  return true;
}

bool CheckStreamFor(DLDevice device, int64_t stream, const char* what) {
  DLB_TRY
  dlbridge::CheckStreamValue(device, stream, what);  // see STR-1; kInvalidArgument: ValueError
  DLB_CATCH(false)
  return true;
}

// PY-57: Tensor(..., stream=): the producer stream of CUDA or ROCm memory, checked for the
// device the tensor is on (as given, else its space's, ordinal 0 for the check).
bool ParseProducerStream(PyObject* value, DLDevice device,
                         const dlbridge::MemoryDescriptor& descriptor,
                         std::optional<int64_t>* out) {
  out->reset();
  if (value == Py_None) return true;
  int64_t stream = 0;
  if (!ToStreamValue(value, "Tensor: stream", &stream)) return false;
  if (device.device_type == 0) {
    device = DLDevice{dlbridge::DefaultDeviceType(descriptor.GetMemorySpaceKind()), 0};
  }
  if (!OrdersStreams(StreamFamilyOf(device.device_type))) {
    PyErr_Format(PyExc_ValueError,
                 "Tensor: stream=%lld for %s memory (device type %d), which has no streams "
                 "dlbridge orders; stream= is the CUDA or ROCm stream of \"cuda\" or \"hip\" "
                 "memory whose writes may be pending: pass stream=None",
                 static_cast<long long>(stream), descriptor.GetMemorySpace(),
                 static_cast<int>(device.device_type));
    return false;
  }
  if (stream == -1) {
    PyErr_SetString(PyExc_ValueError,
                    "Tensor: stream=-1 is a consumer's 'order nothing', not a stream work is "
                    "queued on; pass stream=None when nothing is pending");
    return false;
  }
  if (!CheckStreamFor(device, stream, "Tensor: stream")) return false;
  *out = stream;
  return true;
}

// PY-58: an export of a tensor whose producer stream is known orders the consumer's stream
// after it (the core's OrderStreams: event recorded on the producer, waited on by the
// consumer), before anything is emitted, so a failure leaves no capsule and the hold as it was.
bool OrderExport(const dlbridge::Tensor& t, DLDevice source, DLDevice target, PyObject* stream,
                 int64_t consumer) {
  if (!t.stream.has_value()) return true;
  const StreamFamily family = StreamFamilyOf(source.device_type);
  if (!OrdersStreams(family)) return true;  // its space changed to one without streams
  if (!OrdersStreams(StreamFamilyOf(target.device_type))) {
    PyErr_Format(PyExc_BufferError,
                 "__dlpack__: the tensor's writes may be pending on stream %lld, and dlbridge "
                 "cannot make the host wait for a stream: export it to its own device with the "
                 "consumer's stream=, or synchronise the stream and build the tensor with "
                 "stream=None before reading it as (kDLCPU, 0)",
                 static_cast<long long>(*t.stream));
    return false;
  }
  if (stream == Py_None) consumer = DefaultStream(source.device_type);
  // PY-61: a failed driver call or an unusable runtime is the core's kRuntimeUnavailable (or
  // the runtime's own code): BufferError, raised before any emission, so the export count and
  // the hold stay as they were and OrderStreams has destroyed what it made.
  DLB_TRY
  dlbridge::OrderStreams(source, *t.stream, consumer);  // -1 and equal streams: nothing to do
  DLB_CATCH(false)
  return true;
}

// PY-59: the stream from_dlpack passes to the producer's __dlpack__, for the device the consumer
// will use: device memory of CUDA (kDLCUDA, kDLCUDAManaged) or ROCm (kDLROCM) gets the
// current stream (dlbridge.current_stream) unless stream= names another; pinned host memory
// (kDLCUDAHost, kDLROCMHost, read by the host) and other devices get none unless stream= is
// given for a CUDA or ROCm type; a device without streams refuses stream=.
bool ImportStream(PyObject* explicitStream, DLDevice consumer, bool* pass, int64_t* value) {
  *pass = false;
  const StreamFamily family = StreamFamilyOf(consumer.device_type);
  if (explicitStream == Py_None) {
    if (!OrdersStreams(family)) return true;  // the common case: kDLCPU, one table lookup
    // Device memory of CUDA or ROCm: a type with their streams that the host does not read as
    // it is (pinned host memory is read by the host).
    const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(consumer.device_type);
    if (row != nullptr && !row->host_addressable) {
      *pass = true;
      *value = CurrentStream(consumer);
    }
    return true;
  }
  if (!ToStreamValue(explicitStream, "from_dlpack: stream", value)) return false;
  if (family == StreamFamily::kUnspecified) {  // kNone (kDLCPU): CheckStreamFor refuses it
    PyErr_Format(PyExc_ValueError,
                 "from_dlpack: stream=%lld for device (%d, %d): dlbridge passes streams only "
                 "for CUDA and ROCm devices; pass stream=None",
                 static_cast<long long>(*value), static_cast<int>(consumer.device_type),
                 static_cast<int>(consumer.device_id));
    return false;
  }
  if (!CheckStreamFor(consumer, *value, "from_dlpack: stream")) return false;  // kDLCPU: refused
  *pass = true;
  return true;
}

namespace {

// PY-60: the current stream of each device whose stream was set (per CUDA or ROCm device id;
// CUDA's three device types share one entry, as they share the device's streams). Unset
// devices have the Python protocol's default. A mutex, not the GIL, guards it: the exchange
// API's current_work_stream may be called from any thread, without the GIL.
struct CurrentStreams {
  std::mutex mutex;
  std::map<std::pair<int, int32_t>, int64_t> set;
};

CurrentStreams& Current() {
  static CurrentStreams* streams = new CurrentStreams();  // never destroyed: used at exit too
  return *streams;
}

std::pair<int, int32_t> KeyOf(DLDevice device) {
  return {static_cast<int>(StreamFamilyOf(device.device_type)), device.device_id};
}

// A (device_type, device_id) argument of current_stream / set_current_stream.
bool ToStreamDevice(PyObject* value, const char* what, DLDevice* out) {
  if (!ToDevice(value, what, out)) return false;  // see PY-64
  if (out->device_id < 0) {
    PyErr_Format(PyExc_ValueError,
                 "%s %R is out of range; its device_id is a device ordinal (>= 0), e.g. "
                 "(kDLCUDA, 0) = (2, 0)",
                 what, value);
    return false;
  }
  return true;
}

}  // namespace

int64_t CurrentStream(DLDevice device) {
  CurrentStreams& streams = Current();
  std::lock_guard<std::mutex> lock(streams.mutex);
  auto it = streams.set.find(KeyOf(device));
  return it != streams.set.end() ? it->second : DefaultStream(device.device_type);
}

void* CurrentWorkStreamHandle(int32_t deviceType, int32_t deviceId) noexcept {
  if (!OrdersStreams(StreamFamilyOf(deviceType))) return nullptr;  // no streams
  try {
    // The Python stream value is the handle: CUDA 1 and 2 are CU_STREAM_LEGACY and
    // CU_STREAM_PER_THREAD, ROCm 0 is the null stream, larger values are stream handles.
    const int64_t stream = CurrentStream(DLDevice{static_cast<DLDeviceType>(deviceType), deviceId});
    return reinterpret_cast<void*>(static_cast<uintptr_t>(stream));
  } catch (...) {
    return nullptr;  // a failed lock: no stream known
  }
}

PyObject* PyCurrentStream(PyObject*, PyObject* device) {
  DLDevice d{};
  if (!ToStreamDevice(device, "current_stream: device", &d)) return nullptr;
  if (!OrdersStreams(StreamFamilyOf(d.device_type))) Py_RETURN_NONE;
  int64_t stream = 0;
  DLB_TRY
  stream = CurrentStream(d);
  DLB_CATCH(nullptr)
  return PyLong_FromLongLong(stream);
}

PyObject* PySetCurrentStream(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError,
                 "set_current_stream() takes exactly 2 positional arguments (device, stream), "
                 "%zd given",
                 nargs);
    return nullptr;
  }
  DLDevice d{};
  if (!ToStreamDevice(args[0], "set_current_stream: device", &d)) return nullptr;
  const bool reset = args[1] == Py_None;
  int64_t stream = 0;
  if (!reset && !ToStreamValue(args[1], "set_current_stream: stream", &stream)) return nullptr;
  if (!OrdersStreams(StreamFamilyOf(d.device_type))) {
    if (reset) Py_RETURN_NONE;  // nothing to reset: such a device has no current stream
    PyErr_Format(PyExc_ValueError,
                 "set_current_stream: device (%d, %d) has no streams dlbridge knows (CUDA: %s; "
                 "ROCm: %s)",
                 static_cast<int>(d.device_type), static_cast<int>(d.device_id),
                 StreamTypeNames(StreamFamily::kCuda), StreamTypeNames(StreamFamily::kRocm));
    return nullptr;
  }
  if (!reset) {
    if (stream == -1) {
      PyErr_SetString(PyExc_ValueError,
                      "set_current_stream: stream -1 is a consumer's 'order nothing', not a "
                      "stream; pass a stream value, or None for the default");
      return nullptr;
    }
    if (!CheckStreamFor(d, stream, "set_current_stream: stream")) return nullptr;
  }
  DLB_TRY
  CurrentStreams& streams = Current();
  std::lock_guard<std::mutex> lock(streams.mutex);
  if (reset) {
    streams.set.erase(KeyOf(d));
  } else {
    streams.set[KeyOf(d)] = stream;
  }
  DLB_CATCH(nullptr)
  Py_RETURN_NONE;
}

}  // namespace dlbpy
