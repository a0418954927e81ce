// libtorch's side of bench/instructions_ops.cpp: at::toDLPack, at::fromDLPack and the round
// trip behind plain functions. Only torch headers here: libtorch bundles ATen/dlpack.h, which is
// DLPack 0.6 and must never meet the 1.x header in one translation unit.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cstdint>
#include <vector>

namespace {

// The same shapes as the dlbridge rows: float32, extents 2 (1 from the 13th on), contiguous.
std::vector<int64_t> Shape(int ndim) {
  std::vector<int64_t> shape(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) shape[static_cast<size_t>(i)] = i < 12 ? 2 : 1;
  return shape;
}

struct Producer {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  long deletes = 0;
};

}  // namespace

void* TorchMake(int ndim) { return new at::Tensor(at::ones(Shape(ndim), at::kFloat)); }

void TorchFree(void* tensor) { delete static_cast<at::Tensor*>(tensor); }

// at::toDLPack plus the consumer's deleter call.
void TorchExport(void* tensor) {
  DLManagedTensor* managed = at::toDLPack(*static_cast<at::Tensor*>(tensor));
  asm volatile("" : : "g"(managed) : "memory");
  managed->deleter(managed);
}

// at::fromDLPack of a producer's tensor, then the drop (which calls its deleter).
void TorchImport(void* producer) {
  at::Tensor imported = at::fromDLPack(&static_cast<Producer*>(producer)->managed);
  asm volatile("" : : "g"(&imported) : "memory");
}

// at::fromDLPack(at::toDLPack(t)), then the drop.
void TorchRoundTrip(void* tensor) {
  at::Tensor imported = at::fromDLPack(at::toDLPack(*static_cast<at::Tensor*>(tensor)));
  asm volatile("" : : "g"(&imported) : "memory");
}

void* TorchProducer(int ndim, void* data) {
  auto* p = new Producer;
  p->shape = Shape(ndim);
  p->strides.resize(p->shape.size());
  int64_t step = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    p->strides[static_cast<size_t>(i)] = step;
    step *= p->shape[static_cast<size_t>(i)];
  }
  DLTensor& t = p->managed.dl_tensor;
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = p->shape.data();
  t.strides = p->strides.data();
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensor* self) {
    ++static_cast<Producer*>(self->manager_ctx)->deletes;
  };
  return p;
}

long TorchProducerDeletes(void* producer) { return static_cast<Producer*>(producer)->deletes; }
