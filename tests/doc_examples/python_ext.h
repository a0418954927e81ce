// Prelude of docs/python.md's pybind11 extension: the extension's own C++ functions.
#include <dlbridge/dlbridge.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;
inline dlbridge::Tensor MakeMyTensor() { return {}; }
inline double Sum(const dlbridge::Tensor&) { return 0.0; }
template <typename Tensor, typename Stream>
void Launch(const Tensor&, Stream) {}
