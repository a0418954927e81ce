// _viskores_roundtrip: a test extension (not installed) that takes any DLPack producer into a
// Viskores ArrayHandle with dlbridge::viskores, runs a Viskores worklet and algorithm on it
// where it lies, and hands the handle back out as a DLPack capsule; test_viskores.py drives it
// with NumPy and PyTorch. The producer's hold is wrapped so that its one drop is counted.
#include <atomic>
#include <utility>

#include "dlbridge/python.h"
#include "dlbridge/viskores.h"
#include "viskores_test_support.h"

namespace {

namespace dp = dlbridge::python;
namespace vsk = dlbridge::viskores;

std::atomic<int> g_releases{0};

// The producer's hold, moved under an owner whose one drop calls it and counts.
void CountTheDrop(dlbridge::Tensor& t) {
  dlbridge::ReleaseFunction release = nullptr;
  void* context = nullptr;
  if (!t.descriptor.TakeRelease(release, context)) return;
  t.descriptor.SetOwner(dlbridge::MakeOwner(std::make_pair(release, context), [](auto hold) {
    hold.first(hold.second);
    g_releases.fetch_add(1);
  }));
}

// adopt_twice(x) -> (sum, capsule): a 1-D float64 producer adopted into Viskores, doubled in
// place by a worklet, summed by Viskores' Reduce, and exported again (write access, versioned
// capsule when `versioned`) over the same memory.
PyObject* AdoptTwice(PyObject*, PyObject* args) {
  PyObject* producer = nullptr;
  int versioned = 0;
  if (!PyArg_ParseTuple(args, "Op", &producer, &versioned)) return nullptr;
  try {
    dlbridge::Tensor t = dp::FromPyObject(producer);
    CountTheDrop(t);
    viskores::cont::ArrayHandleBasic<double> handle = vsk::Adopt<double>(std::move(t));
    dlbtest::Double(handle);
    const double sum = viskores::cont::Algorithm::Reduce(handle, 0.0);
    PyObject* capsule = dp::ToCapsule(vsk::ToTensor(handle, vsk::Access::kWrite), versioned != 0);
    if (capsule == nullptr) return nullptr;
    return Py_BuildValue("(dN)", sum, capsule);
  } catch (...) {
    dp::SetPythonErrorFromCurrent();
    return nullptr;
  }
}

PyObject* Releases(PyObject*, PyObject*) { return PyLong_FromLong(g_releases.load()); }

PyMethodDef kMethods[] = {
    {"adopt_twice", AdoptTwice, METH_VARARGS, "adopt, double in place, sum, export"},
    {"releases", Releases, METH_NOARGS, "how many adopted producers were released"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "_viskores_roundtrip",
                       nullptr,
                       -1,
                       kMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__viskores_roundtrip() { return PyModule_Create(&kModule); }
