// The module dlbridge._dlbridge: PyInit__dlbridge interns the names the hot paths compare
// against, registers the two types and the exchange API, and adds the constants; the
// module's method table. python/src/py_internal.h says which file does what.
#include "py_internal.h"

namespace dlbpy {

PyObject* g_str_dlpack = nullptr;
PyObject* g_str_dlpack_device = nullptr;
PyObject* g_str_exchange_api = nullptr;
PyObject* g_str_stream = nullptr;
PyObject* g_str_max_version = nullptr;
PyObject* g_str_dl_device = nullptr;
PyObject* g_str_copy = nullptr;
PyObject* g_str_code = nullptr;
PyObject* g_str_device = nullptr;
PyObject* g_str_value = nullptr;
PyObject* g_kwnames_max_version = nullptr;
PyObject* g_max_version = nullptr;
PyObject* g_kwnames_all = nullptr;
PyObject* g_kwnames_device_copy = nullptr;
PyObject* g_kwnames_all_stream = nullptr;
PyObject* g_kwnames_max_version_stream = nullptr;
PyObject* g_kwnames_stream = nullptr;
PyObject* g_enum_type = nullptr;
PyTypeObject* g_descriptor_type = nullptr;
PyTypeObject* g_tensor_type = nullptr;

namespace {

// PY-29: every docstring of the module's, the types' and their methods' tables begins with
// its text signature (the types' tables: descriptor_type.cpp, tensor_type.cpp).
PyMethodDef kModuleMethods[] = {
    {"_check_capsule", DLB_METH(CheckCapsule), METH_O,
     "_check_capsule($module, capsule, /)\n--\n\n"
     "-> [(rule, severity, message)]: runs dlbridge::CheckDLPack on an "
     "unconsumed 'dltensor'/'dltensor_versioned' capsule; the capsule is neither renamed nor "
     "consumed. An empty list means conforming."},
    {"_checker_rules", DLB_METH(CheckerRulesList), METH_NOARGS,
     "_checker_rules($module, /)\n--\n\n"
     "-> [(rule, severity, summary)]: every rule _check_capsule can report."},
    {"_device_table", DLB_METH(DeviceTableList), METH_NOARGS,
     "_device_table($module, /)\n--\n\n"
     "-> [(device_type, name, address_arithmetic, host_accessible)]: every row of the core's "
     "device table (dlbridge::DeviceTable), in DLDeviceType order."},
    {"_python_advice", DLB_METH(PythonAdviceList), METH_NOARGS,
     "_python_advice($module, /)\n--\n\n"
     "-> [(advice, cpp, python)]: each advice an error can carry (dlbridge::ErrorAdvice), "
     "in C++'s and in Python's words."},
    {"_raise_error", DLB_METH(RaiseError), METH_VARARGS,
     "_raise_error($module, code, reason, advice, detail, /)\n--\n\n"
     "Raises the Python exception of a dlbridge::Error(code, reason, advice, detail) (tests)."},
    {"from_dlpack", DLB_METH(FromDlpack), METH_FASTCALL | METH_KEYWORDS,
     "from_dlpack($module, x, /, *, device=None, copy=None, stream=None)\n--\n\n"
     "-> dlbridge.Tensor: imports any DLPack producer through its __dlpack__(max_version=(1, "
     "N), dl_device=device, copy=copy) (retried without the keywords on TypeError or "
     "BufferError, the request then met here by a copy), or an unconsumed "
     "'dltensor'/'dltensor_versioned' capsule. device: (device_type, device_id), 'cpu', "
     "'cuda[:N]', 'rocm[:N]', 'hip[:N]' or a torch.device; host-accessible memory (pinned, "
     "managed) reaches (kDLCPU, 0) without a copy, other devices by a copy. copy=True always "
     "copies, copy=False never does (BufferError). stream: "
     "passed to CUDA/ROCm producers (default: current_stream(device)), recorded as the "
     "tensor's stream."},
    {"current_stream", DLB_METH(PyCurrentStream), METH_O,
     "current_stream($module, device, /)\n--\n\n"
     "-> int | None: the stream dlbridge considers current for device (device_type, "
     "device_id): what set_current_stream set, else CUDA 1 (legacy default), ROCm 0 (null "
     "stream); None for devices without streams. from_dlpack passes it to CUDA/ROCm "
     "producers; the exchange API's current_work_stream returns it."},
    {"set_current_stream", DLB_METH(PySetCurrentStream), METH_FASTCALL,
     "set_current_stream($module, device, stream, /)\n--\n\n"
     "Sets the current stream of a CUDA or ROCm device (a Python stream value: CUDA 1, 2 or a "
     "handle; ROCm 0 or a handle); None restores the default. Process-wide, any thread."},
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

// kDLCPU, kDLCUDA, ...: every device type a dlbridge tensor may export as, from the device
// table (its `exported` column), under the enumerator's name.
bool AddDeviceTypes(PyObject* module) {
  int count = 0;
  const dlbridge::DeviceTypeInfo* rows = dlbridge::DeviceTable(&count);
  for (int i = 0; i < count; ++i) {
    if (rows[i].exported && !AddInt(module, rows[i].name, rows[i].device_type)) return false;
  }
  return true;
}

}  // namespace

// The lists the messages name, made once from the device table's columns (see DEV-6).
const char* HostAccessibleTypeNames() {
  static const std::string names = dlbridge::DeviceTypeNames(
      [](const dlbridge::DeviceTypeInfo& row) { return row.host_accessible; });
  return names.c_str();
}

const char* StreamTypeNames(dlbridge::StreamFamily family) {
  static const std::string cuda =
      dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo& row) {
        return row.stream_family == dlbridge::StreamFamily::kCuda;
      });
  static const std::string rocm =
      dlbridge::DeviceTypeNames([](const dlbridge::DeviceTypeInfo& row) {
        return row.stream_family == dlbridge::StreamFamily::kRocm;
      });
  return family == dlbridge::StreamFamily::kCuda ? cuda.c_str() : rocm.c_str();
}

}  // namespace dlbpy

// The extension is dlbridge._dlbridge; python/dlbridge/__init__.py re-exports it as dlbridge.
PyMODINIT_FUNC PyInit__dlbridge(void) {
  using namespace dlbpy;
  // The protocol's method name and max_version request are python.h's (one definition).
  g_str_dlpack = dlbridge::python::detail::DunderDLPack();
  g_kwnames_max_version = dlbridge::python::detail::MaxVersionKwnames();
  g_max_version = dlbridge::python::detail::MaxVersionRequest();
  if (g_str_dlpack == nullptr || !Intern(&g_str_dlpack_device, "__dlpack_device__") ||
      !Intern(&g_str_exchange_api, "__dlpack_c_exchange_api__") ||
      !Intern(&g_str_stream, "stream") || !Intern(&g_str_max_version, "max_version") ||
      !Intern(&g_str_dl_device, "dl_device") || !Intern(&g_str_copy, "copy") ||
      !Intern(&g_str_code, "code") || !Intern(&g_str_device, "device") ||
      !Intern(&g_str_value, "value")) {
    return nullptr;
  }
  g_kwnames_all = PyTuple_Pack(3, g_str_max_version, g_str_dl_device, g_str_copy);
  g_kwnames_device_copy = PyTuple_Pack(2, g_str_dl_device, g_str_copy);
  g_kwnames_all_stream =
      PyTuple_Pack(4, g_str_max_version, g_str_dl_device, g_str_copy, g_str_stream);
  g_kwnames_max_version_stream = PyTuple_Pack(2, g_str_max_version, g_str_stream);
  g_kwnames_stream = PyTuple_Pack(1, g_str_stream);
  if (g_kwnames_max_version == nullptr || g_max_version == nullptr || g_kwnames_all == nullptr ||
      g_kwnames_device_copy == nullptr || g_kwnames_all_stream == nullptr ||
      g_kwnames_max_version_stream == nullptr || g_kwnames_stream == nullptr) {
    return nullptr;
  }
  // enum.Enum, for dl_device items written as enum members (see PY-43: ToIntPair's slow path).
  PyObject* enumModule = PyImport_ImportModule("enum");
  if (enumModule == nullptr) return nullptr;
  g_enum_type = PyObject_GetAttrString(enumModule, "Enum");
  Py_DECREF(enumModule);
  if (g_enum_type == nullptr) return nullptr;

  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  g_descriptor_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kDescriptorSpec));
  g_tensor_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&kTensorSpec));
  if (g_descriptor_type == nullptr || g_tensor_type == nullptr || InstallShutdownHook() != 0) {
    Py_DECREF(module);
    return nullptr;
  }
#if DLBRIDGE_PY_EXCHANGE_API
  PyObject* api = PyCapsule_New(&g_exchange_api, pyh::kExchangeApiName, nullptr);
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
      !AddDeviceTypes(module)) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
