// dlbridge._vtk_adopt: the C++ half of Python's dlbridge.vtk.adopt (see VTK-10). The hold goes
// through dlbridge::vtk::Adopt, so it is dropped by VTK's free function when VTK frees the
// array's buffer, which ShallowCopy shares between arrays: an observer of the Python array's
// DeleteEvent would drop it while a shallow copy still reads the memory.
#include <vtkDataArray.h>
#include <vtkPythonUtil.h>
#include <vtkSmartPointer.h>

#include <string>
#include <utility>
#include <vector>

#include "dlbridge/python.h"
#include "dlbridge/vtk.h"
#if defined(DLBRIDGE_VTK_VISKORES)
#include "dlbridge/vtk_viskores.h"
#endif

namespace {

// adopt(tensor, id_type): a new vtkDataArray (its Python wrapper) over the memory of
// `tensor`, a DLPack producer that dlbridge.vtk.adopt has already checked. On failure the
// import is dropped here, at once (Adopt leaves a refused tensor's hold with the caller).
PyObject* AdoptTensor(PyObject*, PyObject* args) {
  PyObject* producer = nullptr;
  int idType = 0;
  if (PyArg_ParseTuple(args, "Op", &producer, &idType) == 0) return nullptr;
  try {
    dlbridge::Tensor tensor = dlbridge::python::FromPyObject(producer);
    dlbridge::vtk::AdoptOptions options;
    options.id_type = idType != 0;
    vtkSmartPointer<vtkDataArray> array = dlbridge::vtk::Adopt(std::move(tensor), options);
    // The wrapper takes its own VTK reference; `array`'s goes on return.
    return vtkPythonUtil::GetObjectFromPointer(array);
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

// The vtkDataArray a Python VTK wrapper holds, or NULL with TypeError set.
vtkDataArray* DataArrayOf(PyObject* object, const char* who) {
  auto* array =
      static_cast<vtkDataArray*>(vtkPythonUtil::GetPointerFromObject(object, "vtkDataArray"));
  if (array == nullptr) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "dlbridge.vtk.%s: expected a vtkDataArray, got %.100s", who,
                 Py_TYPE(object)->tp_name);
  }
  return array;
}

#if defined(DLBRIDGE_VTK_VISKORES)
// Whether `array` is a vtkmDataArray (VTK names its template classes by typeid).
bool IsViskoresArray(vtkDataArray* array) {
  return std::string(array->GetClassName()).find("vtkmDataArray") != std::string::npos;
}

#endif

// adopt_components(producers, id_type): a new struct-of-arrays vtkDataArray over one 1-D
// producer per component (see VTK-15). Every import is dropped here, at once, on a refusal.
PyObject* AdoptComponents(PyObject*, PyObject* args) {
  PyObject* producers = nullptr;
  int idType = 0;
  if (PyArg_ParseTuple(args, "Op", &producers, &idType) == 0) return nullptr;
  PyObject* sequence = PySequence_Fast(producers, "adopt_components takes a sequence");
  if (sequence == nullptr) return nullptr;
  try {
    std::vector<dlbridge::Tensor> tensors;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence); ++i) {
      tensors.push_back(dlbridge::python::FromPyObject(PySequence_Fast_GET_ITEM(sequence, i)));
    }
    Py_DECREF(sequence);
    sequence = nullptr;
    dlbridge::vtk::AdoptOptions options;
    options.id_type = idType != 0;
    vtkSmartPointer<vtkDataArray> array =
        dlbridge::vtk::AdoptComponents(std::move(tensors), options);
    return vtkPythonUtil::GetObjectFromPointer(array);
  } catch (...) {
    Py_XDECREF(sequence);
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

// buffers(array) -> [(pointer, size in bytes, role), ...]: DescribeBuffers (see VTK-16), whose
// holds drop on return; dlbridge.vtk.describe gives each a hold on the Python array.
PyObject* Buffers(PyObject*, PyObject* object) {
  vtkDataArray* array = DataArrayOf(object, "describe");
  if (array == nullptr) return nullptr;
  try {
    std::vector<dlbridge::MemoryDescriptor> buffers;
#if defined(DLBRIDGE_VTK_VISKORES)
    if (IsViskoresArray(array)) {  // see VTK-18: where Viskores holds it, no host copy
      for (dlbridge::Tensor& part : dlbridge::vtk::ExportViskores(array)) {
        buffers.push_back(std::move(part.descriptor));
      }
    } else {
      buffers = dlbridge::vtk::DescribeBuffers(array);
    }
#else
    buffers = dlbridge::vtk::DescribeBuffers(array);
#endif
    PyObject* list = PyList_New(0);
    for (const dlbridge::MemoryDescriptor& buffer : buffers) {
      PyObject* item =
          list != nullptr
              ? Py_BuildValue("(LLs)", static_cast<long long>(buffer.GetPointer()),
                              static_cast<long long>(buffer.GetSizeInBytes()), buffer.GetRole())
              : nullptr;
      if (item == nullptr || PyList_Append(list, item) != 0) {
        Py_XDECREF(item);
        Py_XDECREF(list);
        return nullptr;
      }
      Py_DECREF(item);
    }
    return list;
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

// [(capsule, role), ...]: each tensor as a versioned DLPack capsule with its descriptor's role
// (DLPack carries no role), for dlbridge.vtk to import. Consumes `parts`.
PyObject* CapsulesWithRoles(std::vector<dlbridge::Tensor>& parts) {
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(parts.size()));
  for (size_t c = 0; list != nullptr && c < parts.size(); ++c) {
    const std::string role = parts[c].descriptor.GetRole();
    PyObject* capsule = dlbridge::python::ToCapsule(std::move(parts[c]), /*versioned=*/true);
    PyObject* item = capsule != nullptr ? Py_BuildValue("(Ns)", capsule, role.c_str()) : nullptr;
    if (item == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(c), item);
  }
  return list;
}

// export_components(array) -> [(capsule, role), ...]: ExportComponents (see VTK-15), one
// capsule per component, each holding the array.
PyObject* ExportComponents(PyObject*, PyObject* object) {
  vtkDataArray* array = DataArrayOf(object, "export_components");
  if (array == nullptr) return nullptr;
  try {
    std::vector<dlbridge::Tensor> parts = dlbridge::vtk::ExportComponents(array);
    return CapsulesWithRoles(parts);
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

#if defined(DLBRIDGE_VTK_VISKORES)
// export_viskores(array) -> [(capsule, role), ...]: ExportViskores (see VTK-18).
PyObject* ExportViskores(PyObject*, PyObject* object) {
  vtkDataArray* array = DataArrayOf(object, "export");
  if (array == nullptr) return nullptr;
  try {
    std::vector<dlbridge::Tensor> parts = dlbridge::vtk::ExportViskores(array);
    return CapsulesWithRoles(parts);
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

// adopt_viskores(tensor): a new vtkmDataArray over `tensor`'s memory (see VTK-13), for VTK's
// Viskores-accelerated filters. The checks are the C++ bridge's; a refused import is dropped
// here, at once.
PyObject* AdoptViskores(PyObject*, PyObject* producer) {
  try {
    dlbridge::Tensor tensor = dlbridge::python::FromPyObject(producer);
    vtkSmartPointer<vtkDataArray> array = dlbridge::vtk::AdoptViskores(std::move(tensor));
    return vtkPythonUtil::GetObjectFromPointer(array);
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

// viskores_device_types() -> [type, ...]: dlbridge::viskores::AdoptableDeviceTypes (see VSK-2).
PyObject* ViskoresDeviceTypes(PyObject*, PyObject*) {
  try {
    const std::vector<int32_t> types = dlbridge::viskores::AdoptableDeviceTypes();
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(types.size()));
    for (size_t i = 0; list != nullptr && i < types.size(); ++i) {
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), PyLong_FromLong(types[i]));
    }
    return list;
  } catch (...) {
    dlbridge::python::SetPythonErrorFromCurrent();
    return nullptr;
  }
}
#endif

PyMethodDef g_methods[] = {{"adopt", &AdoptTensor, METH_VARARGS, nullptr},
                           {"adopt_components", &AdoptComponents, METH_VARARGS, nullptr},
                           {"buffers", &Buffers, METH_O, nullptr},
                           {"export_components", &ExportComponents, METH_O, nullptr},
#if defined(DLBRIDGE_VTK_VISKORES)
                           {"adopt_viskores", &AdoptViskores, METH_O, nullptr},
                           {"viskores_device_types", &ViskoresDeviceTypes, METH_NOARGS, nullptr},
                           {"export_viskores", &ExportViskores, METH_O, nullptr},
#endif
                           {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        "dlbridge._vtk_adopt",
                        nullptr,
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__vtk_adopt() { return PyModule_Create(&g_module); }
