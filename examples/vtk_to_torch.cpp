// VTK -> libtorch with the two bridges: a vtkDataArray becomes an at::Tensor on the same
// memory, and the VTK array is deleted exactly when the last at::Tensor on it dies. Without
// the bridges this is a hand-written owner adaptor, a dtype switch, a DLPack struct filled by
// hand and ATen's DLPack 0.6 header kept out of dlbridge's translation unit (bridges/vtk/README.md
// counts the lines).
#include <ATen/ATen.h>
#include <dlbridge/torch.h>
#include <dlbridge/vtk.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkSmartPointer.h>

#include <cstdio>

namespace {

int deletes = 0;

int Fail(const char* what) {
  std::printf("FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  vtkSmartPointer<vtkDoubleArray> velocity = vtkSmartPointer<vtkDoubleArray>::New();
  velocity->SetNumberOfComponents(3);
  velocity->SetNumberOfTuples(5);
  for (vtkIdType i = 0; i < 15; ++i) velocity->SetValue(i, static_cast<double>(i));
  vtkSmartPointer<vtkCallbackCommand> onDelete = vtkSmartPointer<vtkCallbackCommand>::New();
  onDelete->SetCallback([](vtkObject*, unsigned long, void*, void*) {
    ++deletes;
    std::printf("  [vtk] the vtkDoubleArray was deleted (deletions %d)\n", deletes);
  });
  velocity->AddObserver(vtkCommand::DeleteEvent, onDelete);
  void* vtkData = velocity->GetVoidPointer(0);

  // The whole hand-off: two lines with the bridges.
  at::Tensor t = dlbridge::torch::ToAten(dlbridge::vtk::Export(velocity));
  velocity = nullptr;  // libtorch's storage now holds the array

  std::printf("VTK data %p, at::Tensor data %p, sizes [%lld, %lld]: %s\n", vtkData, t.data_ptr(),
              static_cast<long long>(t.size(0)), static_cast<long long>(t.size(1)),
              t.data_ptr() == vtkData ? "zero copy" : "COPIED");
  if (t.data_ptr() != vtkData) return Fail("copied");
  std::printf("sum of component 2: %g (VTK wrote 2+5+8+11+14 = 40)\n",
              t.select(1, 2).sum().item<double>());
  at::Tensor row = t[4];  // a view shares the storage, and so the hold
  t = at::Tensor();
  std::printf("deletions after dropping the tensor, with a view alive: %d\n", deletes);
  if (deletes != 0) return Fail("deleted while a view lived");
  row = at::Tensor();
  std::printf("deletions after the last view: %d\n", deletes);
  if (deletes != 1) return Fail("not deleted exactly once");
  std::printf("OK\n");
  return 0;
}
