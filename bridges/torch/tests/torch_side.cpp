// libtorch only (DLPack 0.6 through ATen/DLConvertor.h): see torch_side.h.
#include "torch_side.h"

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

namespace torch_side {
namespace {

void (*g_torchDeleter)(DLManagedTensor*) = nullptr;
int g_deleterCalls = 0;
at::Tensor g_imported;

void CountingDeleter(DLManagedTensor* self) {
  ++g_deleterCalls;
  g_torchDeleter(self);
}

}  // namespace

void* ExportTransposed(int64_t* dataPointer) {
  at::Tensor t = at::arange(12, at::kFloat).reshape({3, 4}).t();
  DLManagedTensor* managed = at::toDLPack(t);
  g_torchDeleter = managed->deleter;
  g_deleterCalls = 0;
  managed->deleter = &CountingDeleter;
  *dataPointer = reinterpret_cast<int64_t>(t.data_ptr());
  return managed;
}

int DeleterCalls() { return g_deleterCalls; }

int64_t Import(void* managed, double* sum, int64_t sizes[2], int64_t strides[2]) {
  g_imported = at::fromDLPack(static_cast<DLManagedTensor*>(managed));
  *sum = g_imported.sum().item<double>();
  for (int i = 0; i < 2; ++i) {
    sizes[i] = g_imported.size(i);
    strides[i] = g_imported.stride(i);
  }
  return reinterpret_cast<int64_t>(g_imported.data_ptr());
}

void DropImported() { g_imported = at::Tensor(); }

}  // namespace torch_side
