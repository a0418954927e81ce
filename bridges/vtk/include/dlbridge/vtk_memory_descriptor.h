/// @file
/// VTK's own memory descriptor (`vtkMemoryDescriptor`, in VTK's unreleased work: no released
/// VTK has it yet) and dlbridge's, converted both ways with the hold handed over exactly once
/// (spec/bridges.md, VTK-19). Compiled only where `<vtkMemoryDescriptor.h>` is found:
/// DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR is 1 then, 0 otherwise, and this header declares nothing
/// else. Header-only (target dlbridge::vtk): it needs nothing of the bridge's library, so a
/// build against an older VTK is unchanged.
#pragma once

#if defined(__has_include)
#if __has_include(<vtkMemoryDescriptor.h>)
#define DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR 1
#endif
#endif
#ifndef DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR
#define DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR 0
#endif

#if DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR
#include <vtkMemoryDescriptor.h>
#include <vtkObject.h>
#include <vtkSmartPointer.h>

#include <utility>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/callbacks.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/owner.h"

namespace dlbridge {
namespace vtk {

/// dlbridge's descriptor of the buffer `source` (VTK's) describes, with its hold. The
/// description is copied and checked as MemoryDescriptor::Set checks it (a null space is
/// "host", a null role "data"; a space that is not host, cuda, hip or level_zero, a negative
/// size or a null pointer with bytes is refused). The hold: a release is taken from `source`
/// (its TakeRelease) and held by the result, which calls it exactly once when it drops; an
/// owner (a VTK object) is registered once more by the result, `source` keeping its own
/// reference, as VTK's TakeRelease asks of owner holds. `source` with no hold gives a
/// descriptor with none. On failure (Error: kInvalidArgument for a null `source`, the checks
/// of Set, kOutOfMemory) nothing is taken: `source` keeps its hold.
// VTK-19: VTK's descriptor to dlbridge's, the hold handed over once.
inline MemoryDescriptor FromVtkMemoryDescriptor(vtkMemoryDescriptor* source) {
  const kit::Site site{"vtk", "FromVtkMemoryDescriptor"};
  if (source == nullptr) site.Fail(ErrorCode::kInvalidArgument, "source is null");
  MemoryDescriptor result;
  try {
    const char* space = source->GetMemorySpace();
    const char* role = source->GetRole();
    result.Set(source->GetPointer(), source->GetSizeInBytes(), space != nullptr ? space : "host",
               role != nullptr ? role : "data");
    if (source->GetOwner() != nullptr) {
      result.SetOwner(MakeOwner(vtkSmartPointer<vtkObject>(source->GetOwner())));
    }
  } catch (const Error& e) {
    site.Fail(e.code(), e.what());
  }
  vtkMemoryDescriptor::ReleaseFunction release = nullptr;
  void* context = nullptr;
  if (source->GetOwner() == nullptr && source->TakeRelease(release, context)) {
    result.SetRelease(release, context);  // noexcept in effect: a new descriptor holds nothing
  }
  return result;
}

/// VTK's descriptor of the buffer `source` describes, taking its hold: the description is
/// copied, and the hold (a release, or an owner, as the one call of TakeRelease's pair) moves
/// into the result's release, which VTK calls exactly once when the result drops or hands it
/// on (vtkmDataArrayFactory does). `source` is left holding nothing. A descriptor without a
/// hold gives one without. On failure (Error: kOutOfMemory when VTK cannot make the object or
/// the owner's pair cannot be allocated) `source` keeps its hold.
// VTK-19: dlbridge's descriptor to VTK's, the hold handed over once.
inline vtkSmartPointer<vtkMemoryDescriptor> ToVtkMemoryDescriptor(MemoryDescriptor&& source) {
  const kit::Site site{"vtk", "ToVtkMemoryDescriptor"};
  vtkSmartPointer<vtkMemoryDescriptor> result = vtkSmartPointer<vtkMemoryDescriptor>::New();
  if (result == nullptr) site.Fail(ErrorCode::kOutOfMemory, "VTK could not make a descriptor");
  result->Set(source.GetPointer(), source.GetSizeInBytes(), source.GetMemorySpace(),
              source.GetRole());
  ReleaseFunction release = nullptr;
  void* context = nullptr;
  if (source.TakeRelease(release, context)) result->SetRelease(release, context);
  return result;
}

}  // namespace vtk
}  // namespace dlbridge
#endif  // DLBRIDGE_VTK_HAS_MEMORY_DESCRIPTOR
