/// @file
/// The VTK bridge (spec/bridges.md, "VTK"): a vtkDataArray exported as a dlbridge::Tensor that
/// holds the array, and a Tensor adopted into a new vtkDataArray that drops the tensor's hold
/// when VTK frees the memory (the seed's vtkmDataArrayFactory hand-off). Link dlbridge::vtk.
#pragma once

#include <vtkAbstractArray.h>
#include <vtkDataArray.h>
#include <vtkSmartPointer.h>

#include <cstdint>
#include <vector>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/tensor.h"

/// @def DLBRIDGE_VTK_API
/// Marks what libdlbridge_vtk exports: default visibility (ELF, Mach-O); on Windows dllexport
/// while building it and dllimport for its users; empty for a static build
/// (DLBRIDGE_VTK_STATIC_DEFINE, which CMake defines for its consumers).
#if defined(DLBRIDGE_VTK_STATIC_DEFINE)
#define DLBRIDGE_VTK_API
#elif defined(_WIN32)
#if defined(DLBRIDGE_VTK_BUILDING)
#define DLBRIDGE_VTK_API __declspec(dllexport)
#else
#define DLBRIDGE_VTK_API __declspec(dllimport)
#endif
#else
#define DLBRIDGE_VTK_API __attribute__((visibility("default")))
#endif

namespace dlbridge {
/// The VTK bridge. Its namespace is dlbridge::vtk: inside it, write `::vtk::` for VTK's own
/// `vtk` namespace (vtk::TakeSmartPointer, vtk::DataArrayValueRange).
namespace vtk {

/// The DLPack dtype of VTK's numeric data type `vtkDataType` (VTK_FLOAT, VTK_ID_TYPE, ...):
/// VTK_FLOAT and VTK_DOUBLE are float32 and float64; the integer types are intN/uintN of
/// their width on this platform (VTK_LONG and VTK_ID_TYPE follow the build); VTK_CHAR is int8
/// where `char` is signed (x86) and uint8 where it is unsigned (Arm), since the values are
/// the platform's `char`. Throws Error(kUnsupportedDtype) for VTK_BIT (bit-packed), VTK_STRING
/// and every other non-numeric type, naming it.
DLBRIDGE_VTK_API DLDataType DataTypeOfVtkType(int vtkDataType);

/// The VTK data type Adopt creates for `dtype` (lanes 1): int8 VTK_SIGNED_CHAR (VTK_CHAR means
/// text), uint8 VTK_UNSIGNED_CHAR, int16/uint16 VTK_SHORT/VTK_UNSIGNED_SHORT, int32/uint32
/// VTK_INT/VTK_UNSIGNED_INT, int64/uint64 VTK_TYPE_INT64/VTK_TYPE_UINT64 (vtkTypeInt64Array),
/// float32 VTK_FLOAT, float64 VTK_DOUBLE. Throws Error(kUnsupportedDtype) for anything else
/// (bool, float16, bfloat16, complex, lanes > 1: VTK has no such AOS array), naming the dtype.
DLBRIDGE_VTK_API int VtkTypeOfDataType(DLDataType dtype);

/// Exports `array`'s values, zero copy: data is `array->GetVoidPointer(0)`, the dtype is
/// DataTypeOfVtkType(array->GetDataType()) and the shape is always 2-D,
/// (GetNumberOfTuples(), GetNumberOfComponents()), C-contiguous: the components are the last
/// dimension even when there is one, so code reading shape[1] works for every array. Host
/// memory ("host", device derived as kDLCPU).
///
/// Ownership: the returned tensor's descriptor holds a reference to `array` (its owner) and
/// drops it exactly once when the last holder lets go (the descriptor, or the deleter of the
/// DLPack tensor it is exported into, on whichever thread runs it): the array lives at least
/// that long. VTK's reference counting is thread-safe, so the drop may happen on any thread.
/// Writing to the array's values is seen by every consumer; resizing or reallocating the
/// array while a consumer reads it is the caller's error, as with GetVoidPointer.
///
/// On failure throws Error and takes no reference: kInvalidArgument for a null array or one
/// whose values are not interleaved in one block (an SOA or implicit array, which
/// GetVoidPointer would copy: DeepCopy it into an AOS array such as vtkFloatArray first);
/// kUnsupportedDtype for an array that is not a vtkDataArray (vtkStringArray, vtkVariantArray)
/// or a vtkBitArray; kOverflow if its byte size does not fit int64.
DLBRIDGE_VTK_API Tensor Export(vtkAbstractArray* array);

/// Options of Adopt.
struct AdoptOptions {
  /// Adopt a tensor whose descriptor holds nothing (no owner, no release): VTK then never
  /// frees the memory and the caller keeps it valid for as long as the array uses it. Off by
  /// default: such a tensor is refused with Error(kNoHold).
  bool allow_unowned = false;
  /// Create a vtkIdTypeArray for a signed integer dtype of vtkIdType's width (int64 in
  /// 64-bit-id builds), for connectivity and offsets; otherwise vtkTypeInt64Array etc.
  bool id_type = false;
};

/// Adopts `tensor`'s memory into a new AOS vtkDataArray of the matching type (see
/// VtkTypeOfDataType), zero copy: the array's values are the tensor's, element zero at
/// `GetVoidPointer(0)`. A 1-D tensor of n elements becomes n tuples of one component; a 2-D
/// (n, c) one n tuples of c components. The tensor must be host memory (space "host", device
/// 0 or kDLCPU), C-contiguous, ndim 1 or 2, writable (VTK arrays have no read-only mode),
/// aligned for its element type, and pass every export check (its layout inside the
/// descriptor's bytes).
///
/// Ownership, on success: the tensor's hold (owner or release) moves out of
/// `tensor.descriptor` (left empty) into dlbridge's hand-off registry, keyed by the data
/// pointer; the array frees its memory through dlbridge's free function, which drops that
/// hold exactly once: when the array's last reference goes, or when VTK gives the array new
/// memory (SetArray, a resize), on whichever thread does it. A release that
/// throws is swallowed and counted (CallbackExceptionCount). Several arrays may adopt memory
/// at the same address (views of one buffer): each registers its own hold and each free
/// drops one hold at that address, so every hold is dropped exactly once and, while any
/// array at the address still uses the memory, a hold on it remains (each hold keeps the
/// whole buffer alive). A tensor without elements or with a null data
/// pointer gets an empty array and its hold is dropped before Adopt returns (VTK never frees
/// an array without memory). With AdoptOptions::allow_unowned and no hold, VTK is told never
/// to free the memory.
///
/// On failure throws Error and leaves `tensor` unchanged, its hold with the caller:
/// kUnsupportedDevice for memory that is not host memory; kInvalidShape for ndim other than
/// 1 or 2, or too many elements for vtkIdType; kInvalidStrides for a non-contiguous layout;
/// kUnsupportedDtype for a dtype VTK has no array of; kReadOnly for a read-only tensor;
/// kInvalidArgument for misaligned data; kNoHold for a tensor that holds nothing (unless
/// allow_unowned); every Error an export check gives (ExportPlan); kOutOfMemory when VTK or
/// the registry cannot allocate.
DLBRIDGE_VTK_API vtkSmartPointer<vtkDataArray> Adopt(Tensor&& tensor,
                                                     const AdoptOptions& options = {});

/// Adopts one 1-D tensor per component into a new struct-of-arrays array
/// (vtkSOADataArrayTemplate of the matching type), zero copy: component c's values are
/// `components[c]`'s, as `GetComponentArrayPointer(c)`. Every tensor is checked as Adopt checks
/// it (host, C-contiguous, writable, aligned, a VTK dtype, every export check), 1-D, all of one
/// dtype and length (kInvalidShape naming the two that differ), before any hold moves; any
/// number of components (at least one; kInvalidArgument for none).
///
/// Ownership, on success: each component's hold moves into the hand-off registry under its
/// own pointer and VTK frees each component through dlbridge's free function, which drops
/// that component's hold exactly once (see VTK-7, per pointer); each tensor's descriptor
/// is left empty. With AdoptOptions::allow_unowned, a component without a hold is never freed.
/// Tensors without elements give an empty array and their holds drop before the return. On
/// failure throws Error and leaves every tensor unchanged, its hold with the caller.
DLBRIDGE_VTK_API vtkSmartPointer<vtkDataArray> AdoptComponents(std::vector<Tensor>&& components,
                                                               const AdoptOptions& options = {});

/// One 1-D tensor per component of a struct-of-arrays array (vtkSOADataArrayTemplate of any
/// numeric type), zero copy: tensor c is `GetComponentArrayPointer(c)`'s GetNumberOfTuples()
/// values, host memory, role "component_c", dtype DataTypeOfVtkType. Each tensor's descriptor
/// holds the array (one shared reference), so the array lives until the last consumer of any
/// component lets go. As with Export, the memory is only as stable as the array's storage:
/// VTK 9.3 and later make GetVoidPointer on an SOA array switch it to interleaved storage and
/// free the component buffers (dropping an adopted component's hold), which invalidates the
/// tensors as a resize would. Throws Error and takes no reference: kInvalidArgument for a null
/// array, an array that is not a vtkDataArray, or one that is not struct-of-arrays (use Export for
/// AOS arrays); kUnsupportedDtype for a non-numeric type.
DLBRIDGE_VTK_API std::vector<Tensor> ExportComponents(vtkAbstractArray* array);

/// The buffers `array` really owns, as memory descriptors (pointer, size in bytes, space
/// "host", role) that each hold the array: an AOS array's one "data" buffer (as Export
/// describes it), a struct-of-arrays array's "component_0", "component_1", ... buffers (as
/// ExportComponents), and nothing for every other array (implicit, mapped, scaled, bit and
/// string arrays, a null array): a description is always a view of real storage, never a
/// flattened temporary. Throws only Error(kOutOfMemory) (the hold's block) and kOverflow.
DLBRIDGE_VTK_API std::vector<MemoryDescriptor> DescribeBuffers(vtkAbstractArray* array);

/// Export under the bridges' one naming scheme (spec/bridges.md, "Naming"; see KIT-6).
inline Tensor ToTensor(vtkAbstractArray* array) { return Export(array); }
/// ExportComponents under the bridges' one naming scheme (as Viskores' ToTensors; see KIT-6).
inline std::vector<Tensor> ToTensors(vtkAbstractArray* array) { return ExportComponents(array); }

/// How many adopted holds the hand-off registry keeps now (arrays whose memory VTK has not
/// freed yet). For tests and leak checks; thread-safe.
DLBRIDGE_VTK_API int64_t AdoptedHoldCount() noexcept;

}  // namespace vtk
}  // namespace dlbridge
