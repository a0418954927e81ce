// Prelude of docs/bridges/vtk.md's fragment: a VTK array and a tensor from elsewhere.
#include <dlbridge/dlbridge.h>
#include <vtkDataArray.h>

inline vtkDataArray* array = nullptr;
inline dlbridge::Tensor tensor;
