// The VTK bridge at work: a vtkDataArray lent to a C++ consumer through DLPack with
// dlbridge::vtk::Export, then the consumer's result handed back into VTK with
// dlbridge::vtk::Adopt (the seed's vtkmDataArrayFactory hand-off). Prints the pointers (equal:
// zero copy) and when each array is deleted and each release runs (exactly once).
#include <dlbridge/dlbridge.h>
#include <dlbridge/owner.h>
#include <dlbridge/vtk.h>
#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkFloatArray.h>
#include <vtkSmartPointer.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

namespace {

int deletes = 0;  // vtkFloatArray deletions seen

void Watch(vtkObject* object) {
  vtkSmartPointer<vtkCallbackCommand> command = vtkSmartPointer<vtkCallbackCommand>::New();
  command->SetCallback([](vtkObject* caller, unsigned long, void*, void*) {
    ++deletes;
    std::printf("  [vtk] %s deleted (deletions now %d)\n", caller->GetClassName(), deletes);
  });
  object->AddObserver(vtkCommand::DeleteEvent, command);
}

// A consumer that only speaks DLPack: it imports, scales the values in place and lets go.
void Consume(DLManagedTensorVersioned* managed) {
  dlbridge::Tensor tensor = dlbridge::FromDLPack(managed);
  float* values = tensor.Data<float>();
  const int64_t count = tensor.layout.ElementCount();
  for (int64_t i = 0; i < count; ++i) values[i] *= 10.0f;
  std::printf("  [consumer] scaled %lld values at %p\n", static_cast<long long>(count),
              static_cast<void*>(values));
}  // the import's hold (the DLPack deleter) drops here

int Fail(const char* what) {
  std::printf("FAILED: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  std::printf("1. A vtkFloatArray of 4 tuples x 3 components, exported through DLPack\n");
  vtkSmartPointer<vtkFloatArray> points = vtkSmartPointer<vtkFloatArray>::New();
  points->SetNumberOfComponents(3);
  points->SetNumberOfTuples(4);
  for (vtkIdType i = 0; i < 12; ++i) points->SetValue(i, static_cast<float>(i));
  Watch(points);
  void* vtkData = points->GetVoidPointer(0);
  dlbridge::Tensor exported = dlbridge::vtk::Export(points);
  DLManagedTensorVersioned* managed = dlbridge::ToDLPackVersioned(std::move(exported));
  std::printf("  VTK data %p, DLPack data %p, shape (%lld, %lld): %s\n", vtkData,
              managed->dl_tensor.data, static_cast<long long>(managed->dl_tensor.shape[0]),
              static_cast<long long>(managed->dl_tensor.shape[1]),
              managed->dl_tensor.data == vtkData ? "zero copy" : "COPIED");
  if (managed->dl_tensor.data != vtkData) return Fail("export copied");
  points = nullptr;  // the producer lets go: the DLPack tensor keeps the array alive
  std::printf("  producer dropped its reference; deletions %d (the consumer holds the array)\n",
              deletes);
  if (deletes != 0) return Fail("array deleted while the consumer held it");
  Consume(managed);
  if (deletes != 1) return Fail("array not deleted exactly once when the consumer let go");

  std::printf("2. A consumer's own buffer adopted into a new vtkDataArray (Adopt)\n");
  struct Result {
    std::vector<double> values = std::vector<double>(8, 0.5);
    int releases = 0;
  } result;
  dlbridge::Tensor tensor;
  tensor.descriptor.Set(result.values.data(), 64);
  tensor.descriptor.SetRelease(
      [](void* context) {
        ++static_cast<Result*>(context)->releases;
        std::printf("  [consumer] release ran: its buffer may be reused\n");
      },
      &result);
  tensor.layout = dlbridge::TensorLayout(dlbridge::DataTypeOf<double>(), {4, 2});
  vtkSmartPointer<vtkDataArray> adopted = dlbridge::vtk::Adopt(std::move(tensor));
  std::printf("  buffer %p, %s data %p (%lld tuples x %d): %s\n",
              static_cast<void*>(result.values.data()), adopted->GetClassName(),
              adopted->GetVoidPointer(0), static_cast<long long>(adopted->GetNumberOfTuples()),
              adopted->GetNumberOfComponents(),
              adopted->GetVoidPointer(0) == result.values.data() ? "zero copy" : "COPIED");
  std::printf("  releases while VTK holds the array: %d\n", result.releases);
  if (result.releases != 0) return Fail("released early");
  adopted = nullptr;  // VTK frees the array: the release runs now
  std::printf("  releases after VTK freed the array: %d\n", result.releases);
  if (result.releases != 1) return Fail("release not run exactly once");
  std::printf("OK\n");
  return 0;
}
