/// @file
/// The VTK bridge's Viskores half (spec/bridges.md, VTK-13): a tensor adopted as a
/// `vtkmDataArray` (VTK's vtkDataArray over a Viskores ArrayHandle), so that VTK's
/// Viskores-accelerated filters (`vtkmContour`, `vtkmThreshold`, ...) run on the producer's
/// memory where it lies. Header-only on dlbridge::viskores; needs a VTK with
/// AcceleratorsVTKmCore (VTK 9.6 and later): target dlbridge::vtk_viskores.
#pragma once

#include <viskores/cont/ArrayHandleStride.h>
#include <viskores/cont/Error.h>
#include <viskores/cont/UnknownArrayHandle.h>
#include <vtkDataArray.h>
#include <vtkSmartPointer.h>
#include <vtkmDataArray.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

namespace detail {

// VTK-18: each component of the handle as a strided view of the buffer Viskores holds it in
// (ExtractComponent without a copy), read on `device`; the components of one interleaved
// buffer become one (tuples, components) tensor. Nothing when the values are computed.
template <class T>
std::vector<Tensor> ExportViskoresAs(vtkmDataArray<T>* array, ::dlbridge::viskores::Access access,
                                     DLDevice device) {
  const ::viskores::cont::UnknownArrayHandle unknown = array->GetVtkmUnknownArrayHandle();
  const ::viskores::IdComponent components = unknown.GetNumberOfComponentsFlat();
  const ::viskores::Id values = unknown.GetNumberOfValues();
  std::vector<::viskores::cont::ArrayHandleStride<T>> views;
  for (::viskores::IdComponent c = 0; c < components; ++c) {
    try {
      views.push_back(unknown.ExtractComponent<T>(c, ::viskores::CopyFlag::Off));
    } catch (const ::viskores::cont::Error&) {
      return {};  // implicit, constant, transformed, ...: no storage to describe
    }
    if (views.back().GetModulo() != 0 || views.back().GetDivisor() != 1) return {};
  }
  // One interleaved buffer: every component in the first one's buffer, one value apart.
  bool interleaved = true;
  for (::viskores::IdComponent c = 0; c < components && interleaved; ++c) {
    interleaved =
        views[c].GetBasicArray().GetBuffers()[0] == views[0].GetBasicArray().GetBuffers()[0] &&
        views[c].GetStride() == components && views[c].GetOffset() == views[0].GetOffset() + c;
  }
  // One export (one pointer, one access token) per buffer: a second write token on a buffer
  // this export already holds would wait for itself.
  std::vector<Tensor> parts;
  std::vector<::viskores::Id> offsets;
  std::vector<int64_t> steps;
  for (::viskores::IdComponent c = 0; c < (interleaved ? 1 : components); ++c) {
    Tensor part = ::dlbridge::viskores::ToTensor(views[c].GetBasicArray(), access, device);
    const std::string role = "component_" + std::to_string(c);
    part.descriptor.SetRole(role.c_str());
    parts.push_back(std::move(part));
    offsets.push_back(views[c].GetOffset());
    steps.push_back(views[c].GetStride());
  }
  const DLDataType dtype = DataTypeOf<T>();
  const auto size = static_cast<int64_t>(sizeof(T));
  if (interleaved) {
    Tensor whole = std::move(parts[0]);
    whole.layout = TensorLayout(dtype, {static_cast<int64_t>(values), int64_t{components}},
                                {steps[0], int64_t{1}});
    whole.layout.SetByteOffset(static_cast<uint64_t>(offsets[0] * size));
    whole.descriptor.SetRole("data");
    std::vector<Tensor> out;
    out.push_back(std::move(whole));
    return out;
  }
  for (size_t c = 0; c < parts.size(); ++c) {
    parts[c].layout = TensorLayout(dtype, {static_cast<int64_t>(values)}, {steps[c]});
    parts[c].layout.SetByteOffset(static_cast<uint64_t>(offsets[c] * size));
  }
  return parts;
}

}  // namespace detail

/// A vtkmDataArray's values as tensors where Viskores holds them, zero copy and without a
/// copy to the host: one `(tuples, components)` tensor (role "data") when the handle keeps
/// them in one buffer (basic, Vec and runtime-Vec handles), one 1-D tensor per component (roles
/// "component_i") for struct-of-arrays handles, and none when the values are computed
/// (implicit, constant, transformed handles: no storage to describe). Each tensor holds a copy
/// of its buffer's handle (see VSK-6), read on `device` with `access`. Throws dlbridge::Error:
/// kInvalidArgument for an array that is not a vtkmDataArray, kUnsupportedDevice for a device
/// the Viskores build has no adapter for. Nothing is kept on failure.
// VTK-18: a vtkmDataArray's storage through its Viskores handle.
inline std::vector<Tensor> ExportViskores(
    vtkDataArray* array, ::dlbridge::viskores::Access access = ::dlbridge::viskores::Access::kRead,
    DLDevice device = {kDLCPU, 0}) {
#define DLBRIDGE_VTK_VISKORES_TRY(T)                           \
  if (auto* typed = vtkmDataArray<T>::SafeDownCast(array)) {   \
    return detail::ExportViskoresAs<T>(typed, access, device); \
  }
  if (array != nullptr) {
    DLBRIDGE_VTK_VISKORES_TRY(float)
    DLBRIDGE_VTK_VISKORES_TRY(double)
    DLBRIDGE_VTK_VISKORES_TRY(char)
    DLBRIDGE_VTK_VISKORES_TRY(signed char)
    DLBRIDGE_VTK_VISKORES_TRY(unsigned char)
    DLBRIDGE_VTK_VISKORES_TRY(short)
    DLBRIDGE_VTK_VISKORES_TRY(unsigned short)
    DLBRIDGE_VTK_VISKORES_TRY(int)
    DLBRIDGE_VTK_VISKORES_TRY(unsigned int)
    DLBRIDGE_VTK_VISKORES_TRY(long)
    DLBRIDGE_VTK_VISKORES_TRY(unsigned long)
    DLBRIDGE_VTK_VISKORES_TRY(long long)
    DLBRIDGE_VTK_VISKORES_TRY(unsigned long long)
  }
#undef DLBRIDGE_VTK_VISKORES_TRY
  throw Error(ErrorCode::kInvalidArgument,
              "dlbridge::vtk::ExportViskores: the array is not a vtkmDataArray; Export and "
              "ExportComponents take VTK's own arrays");
}

}  // namespace vtk
}  // namespace dlbridge
