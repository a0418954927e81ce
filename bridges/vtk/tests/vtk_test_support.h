// Helpers for the VTK bridge's tests: a counter of a VTK object's deletions, and the dtype a
// C++ value type must export as (written from the type, independently of the bridge's table).
#pragma once

#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkNew.h>
#include <vtkObject.h>

#include <type_traits>

#include "dlbridge/dlpack_header.h"

namespace vtktest {

/// Counts how often the observed VTK object was deleted (vtkCommand::DeleteEvent).
struct DeleteCounter {
  int deletes = 0;
  void Observe(vtkObject* object) {
    vtkNew<vtkCallbackCommand> command;
    command->SetClientData(this);
    command->SetCallback([](vtkObject*, unsigned long, void* self, void*) {
      ++static_cast<DeleteCounter*>(self)->deletes;
    });
    object->AddObserver(vtkCommand::DeleteEvent, command);
  }
};

/// The DLPack dtype of the C++ type T: float for floating point, else int or uint by
/// signedness, 8 * sizeof(T) bits.
template <class T>
DLDataType ExpectedDtype() {
  const uint8_t code = std::is_floating_point<T>::value ? kDLFloat
                       : std::is_signed<T>::value       ? kDLInt
                                                        : kDLUInt;
  return {code, static_cast<uint8_t>(8 * sizeof(T)), 1};
}

inline bool SameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

}  // namespace vtktest
