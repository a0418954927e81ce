// The libtorch half of the raw DLPack tests with libtorch (TORCH-*), behind an interface with
// no DLPack types: libtorch 1.13 ships DLPack 0.6 (ATen/dlpack.h), which must never meet the 1.x
// header in one translation unit. Managed tensors cross as void*: the legacy DLManagedTensor layout
// is the same in 0.6 and 1.x (DLTensor, manager_ctx, deleter).
#pragma once

#include <cstdint>

namespace torch_side {

/// A 3x4 float32 torch tensor holding 0..11, transposed (4x3, strides {1, 4}), exported with
/// at::toDLPack; its deleter is wrapped to count calls (DeleterCalls). Returns the
/// DLManagedTensor* and the tensor's data pointer.
void* ExportTransposed(int64_t* dataPointer);
/// How often the wrapped libtorch deleter ran since the last ExportTransposed.
int DeleterCalls();

/// at::fromDLPack on a legacy DLManagedTensor*; keeps the torch tensor. Returns its data
/// pointer, and its sum, sizes and strides through the out-parameters.
int64_t Import(void* managed, double* sum, int64_t sizes[2], int64_t strides[2]);
/// Drops the tensor Import keeps (libtorch then calls the producer's deleter).
void DropImported();

}  // namespace torch_side
