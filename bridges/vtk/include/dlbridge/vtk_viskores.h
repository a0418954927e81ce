/// @file
/// The VTK bridge's Viskores half (spec/bridges.md, VTK-13): a tensor adopted as a
/// `vtkmDataArray` (VTK's vtkDataArray over a Viskores ArrayHandle), so that VTK's
/// Viskores-accelerated filters (`vtkmContour`, `vtkmThreshold`, ...) run on the producer's
/// memory where it lies. Header-only on dlbridge::viskores; needs a VTK with
/// AcceleratorsVTKmCore (VTK 9.6 and later): target dlbridge::vtk_viskores.
#pragma once

#include <vtkDataArray.h>
#include <vtkSmartPointer.h>
#include <vtkmDataArray.h>

#include <cstdint>
#include <string>
#include <utility>

#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/tensor.h"
#include "dlbridge/viskores.h"

namespace dlbridge {
namespace vtk {

namespace detail {

template <class T>
vtkSmartPointer<vtkDataArray> AdoptViskoresAs(Tensor&& tensor) {
  // 1-D: one component; 2-D: (tuples, components), Viskores' runtime-sized Vecs.
  if (tensor.layout.Ndim() == 1) {
    auto handle = ::dlbridge::viskores::Adopt<T>(std::move(tensor));
    return vtkSmartPointer<vtkDataArray>::Take(make_vtkmDataArray(handle));
  }
  auto handle = ::dlbridge::viskores::AdoptRuntimeVec<T>(std::move(tensor));
  return vtkSmartPointer<vtkDataArray>::Take(make_vtkmDataArray(handle));
}

}  // namespace detail

/// `tensor` adopted as a new vtkmDataArray, zero copy: a 1-D tensor of n values gives n tuples
/// of one component, a 2-D (n, c) tensor n tuples of c components; the value type is the
/// dtype's (int8 ... uint64, float32, float64). The array's memory is the tensor's, on the
/// device the Viskores bridge maps it to (host memory here; CUDA where VTK's Viskores has the
/// adapter), for VTK's accelerated filters to read where it lies.
///
/// Ownership: on success the tensor's hold moves into the Viskores buffer (dlbridge::viskores
/// Adopt, see VSK-1) and drops exactly once, when VTK and Viskores drop the last reference to the
/// buffer (the array, its shallow copies, a filter's handle of it), on that thread; `tensor` is
/// left without a hold. The buffer cannot grow (see VSK-3). Throws dlbridge::Error, taking nothing:
/// kUnsupportedDtype for a dtype with no VTK array (bool, float16, complex, lanes > 1),
/// kInvalidShape for another rank, and the Viskores bridge's refusals (devices, see VSK-2;
/// streams, see VSK-4; layout, read-only and alignment, see VSK-5). An allocation failure after
/// the hold moved drops it.
// VTK-13: the dtype picks vtkmDataArray<T>; the Viskores bridge adopts the memory.
inline vtkSmartPointer<vtkDataArray> AdoptViskores(Tensor&& tensor) {
  const DLDataType dtype = tensor.layout.Dtype();
  if (tensor.layout.Ndim() != 1 && tensor.layout.Ndim() != 2) {
    throw Error(ErrorCode::kInvalidShape,
                "dlbridge::vtk::AdoptViskores: the tensor has ndim " +
                    std::to_string(tensor.layout.Ndim()) +
                    "; accepted: 1 (one component) or 2 (tuples, components)");
  }
  if (dtype.lanes == 1 && dtype.code == kDLFloat) {
    if (dtype.bits == 32) return detail::AdoptViskoresAs<float>(std::move(tensor));
    if (dtype.bits == 64) return detail::AdoptViskoresAs<double>(std::move(tensor));
  } else if (dtype.lanes == 1 && dtype.code == kDLInt) {
    if (dtype.bits == 8) return detail::AdoptViskoresAs<signed char>(std::move(tensor));
    if (dtype.bits == 16) return detail::AdoptViskoresAs<int16_t>(std::move(tensor));
    if (dtype.bits == 32) return detail::AdoptViskoresAs<int32_t>(std::move(tensor));
    if (dtype.bits == 64) return detail::AdoptViskoresAs<int64_t>(std::move(tensor));
  } else if (dtype.lanes == 1 && dtype.code == kDLUInt) {
    if (dtype.bits == 8) return detail::AdoptViskoresAs<unsigned char>(std::move(tensor));
    if (dtype.bits == 16) return detail::AdoptViskoresAs<uint16_t>(std::move(tensor));
    if (dtype.bits == 32) return detail::AdoptViskoresAs<uint32_t>(std::move(tensor));
    if (dtype.bits == 64) return detail::AdoptViskoresAs<uint64_t>(std::move(tensor));
  }
  throw Error(ErrorCode::kUnsupportedDtype,
              "dlbridge::vtk::AdoptViskores: dtype " + DtypeName(dtype) +
                  " has no vtkmDataArray; accepted: int8, int16, int32, int64, uint8, uint16, "
                  "uint32, uint64, float32, float64");
}

}  // namespace vtk
}  // namespace dlbridge
