// dlbridge._vtk_adopt: the C++ half of Python's dlbridge.vtk.adopt (see VTK-10). The hold goes
// through dlbridge::vtk::Adopt, so it is dropped by VTK's free function when VTK frees the
// array's buffer, which ShallowCopy shares between arrays: an observer of the Python array's
// DeleteEvent would drop it while a shallow copy still reads the memory.
#include <vtkDataArray.h>
#include <vtkPythonUtil.h>
#include <vtkSmartPointer.h>

#include <utility>

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

#if defined(DLBRIDGE_VTK_VISKORES)
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
#endif

PyMethodDef g_methods[] = {{"adopt", &AdoptTensor, METH_VARARGS, nullptr},
#if defined(DLBRIDGE_VTK_VISKORES)
                           {"adopt_viskores", &AdoptViskores, METH_O, nullptr},
#endif
                           {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "dlbridge._vtk_adopt", nullptr, -1, g_methods,
                        nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__vtk_adopt() { return PyModule_Create(&g_module); }
