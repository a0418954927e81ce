// python_h_pybind: a pybind11 module built on dlbridge/python.h, driven by test_python_h.py.
// What a pybind11 extension writes: the capsule of an export, an import of any producer, the
// no-sync view, and one exception translator for the helpers' errors.
#include <pybind11/pybind11.h>

#include <atomic>
#include <string>

#include "dlbridge/python.h"

namespace py = pybind11;
namespace dp = dlbridge::python;

namespace {

std::atomic<int> g_released{0};
int64_t g_last_pointer = 0;

void CountedFree(void* context) {
  delete[] static_cast<double*>(context);
  g_released.fetch_add(1);
}

// A host float64 vector 0, 1, ..., n-1 whose release frees and counts.
dlbridge::Tensor MakeTensor(int64_t n) {
  auto* data = new double[static_cast<size_t>(n > 0 ? n : 1)];
  for (int64_t i = 0; i < n; ++i) data[i] = static_cast<double>(i);
  dlbridge::Tensor t;
  t.descriptor.Set(reinterpret_cast<int64_t>(data), n * 8, "host");
  t.descriptor.SetRelease(&CountedFree, data);
  t.layout = dlbridge::TensorLayout(DLDataType{kDLFloat, 64, 1}, {n});
  g_last_pointer = reinterpret_cast<int64_t>(data);
  return t;
}

// The sum of a 1-d float64 host tensor (what a kernel would compute).
double Sum1d(const dlbridge::Tensor& t) {
  const auto& l = t.layout;
  if (l.Ndim() != 1 || l.Dtype().code != kDLFloat || l.Dtype().bits != 64) {
    throw py::value_error("expected a 1-d float64 tensor");
  }
  const auto* base = reinterpret_cast<const double*>(
      reinterpret_cast<const char*>(t.descriptor.GetPointer()) + l.ByteOffset());
  double sum = 0;
  for (int64_t i = 0; i < l.Shape().data[0]; ++i) sum += base[i * l.Strides().data[0]];
  return sum;
}

}  // namespace

PYBIND11_MODULE(python_h_pybind, m) {
  py::register_exception_translator(&dp::TranslateException);

  m.def("export_capsule", [](int64_t n, bool versioned) {
    PyObject* capsule = dp::ToCapsule(MakeTensor(n), versioned);
    if (capsule == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(capsule);
  });
  // An export refused by the core: the translator turns the Error into its Python class.
  m.def("export_refused", []() {
    dlbridge::Tensor t = MakeTensor(4);
    t.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    PyObject* capsule = dp::ToCapsule(std::move(t), false);
    if (capsule == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(capsule);
  });
  m.def("sum", [](py::handle obj) {
    const dlbridge::Tensor t = dp::FromPyObject(obj.ptr());
    return py::make_tuple(Sum1d(t),
                          t.descriptor.GetPointer() + static_cast<int64_t>(t.layout.ByteOffset()));
  });
  m.def("view_sum", [](py::handle obj) {
    const dp::View view = dp::FromPyObjectNoSync(obj.ptr());
    return py::make_tuple(Sum1d(view.tensor),
                          view.path == dp::ViewPath::kExchangeApi ? "exchange_api" : "dlpack");
  });
  m.def("released", []() { return g_released.load(); });
  m.def("last_pointer", []() { return g_last_pointer; });
}
