// What the Viskores bridge's tests (C++ and the Python test extension) run on adopted memory:
// a worklet that doubles every value in place, and one that gives Vec magnitudes, or Viskores'
// algorithms where the worklet headers cannot be compiled.
#pragma once

#include <viskores/VectorAnalysis.h>
#include <viskores/cont/Algorithm.h>
#include <viskores/cont/ArrayHandle.h>
#include <viskores/cont/Invoker.h>
// Debian's VTK 9.6 ships its Viskores 1.1 without lcl/Quad.h, which the worklet headers
// include: there the tests use Viskores' algorithms (VTK's compiled filters run its worklets).
#if __has_include(<lcl/Quad.h>)
#define DLB_VISKORES_WORKLETS 1
#include <viskores/worklet/WorkletMapField.h>
#else
#define DLB_VISKORES_WORKLETS 0
#endif

namespace dlbtest {

#if DLB_VISKORES_WORKLETS
// v *= 2 in place.
struct Twice : viskores::worklet::WorkletMapField {
  using ControlSignature = void(FieldInOut);
  template <class V>
  VISKORES_EXEC void operator()(V& v) const {
    v = v * 2;
  }
};

// out = |v|.
struct Magnitude : viskores::worklet::WorkletMapField {
  using ControlSignature = void(FieldIn, FieldOut);
  template <class V, class S>
  VISKORES_EXEC void operator()(const V& v, S& out) const {
    out = static_cast<S>(viskores::Magnitude(v));
  }
};
#endif

// Every value doubled where it lies: the worklet, or Viskores' Transform and Copy back.
template <class Handle>
void Double(Handle& handle) {
#if DLB_VISKORES_WORKLETS
  viskores::cont::Invoker{}(Twice{}, handle);
#else
  viskores::cont::ArrayHandle<typename Handle::ValueType> sum;
  viskores::cont::Algorithm::Transform(handle, handle, sum, viskores::Sum());
  viskores::cont::Algorithm::Copy(sum, handle);
#endif
}

// The magnitudes of Vec values: the worklet, or read through the portal.
template <class Handle>
viskores::cont::ArrayHandle<double> Magnitudes(const Handle& vecs) {
  viskores::cont::ArrayHandle<double> out;
#if DLB_VISKORES_WORKLETS
  viskores::cont::Invoker{}(Magnitude{}, vecs, out);
#else
  out.Allocate(vecs.GetNumberOfValues());
  auto read = vecs.ReadPortal();
  auto write = out.WritePortal();
  for (viskores::Id i = 0; i < read.GetNumberOfValues(); ++i) {
    write.Set(i, static_cast<double>(viskores::Magnitude(read.Get(i))));
  }
#endif
  return out;
}

}  // namespace dlbtest
