// Compile-only: the DLPack ABI dlbridge relies on, frozen. Compiling this file is the test.
#include <dlpack/dlpack.h>

#include <cstddef>

#include "dlbridge/tensor.h"

static_assert(DLPACK_MAJOR_VERSION == 1, "dlbridge speaks DLPack 1.x");
static_assert(sizeof(DLDevice) == 8 && offsetof(DLDevice, device_id) == 4, "DLDevice");
static_assert(sizeof(DLDataType) == 4 && offsetof(DLDataType, bits) == 1 &&
                  offsetof(DLDataType, lanes) == 2,
              "DLDataType");
static_assert(sizeof(DLPackVersion) == 8, "DLPackVersion");
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
                  offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
                  offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
                  offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48,
              "DLTensor");
static_assert(offsetof(DLManagedTensor, manager_ctx) == 48 &&
                  offsetof(DLManagedTensor, deleter) == 56 && sizeof(DLManagedTensor) == 64,
              "DLManagedTensor");
// The versioned header must stay stable up to `flags` so any consumer can call the deleter.
static_assert(offsetof(DLManagedTensorVersioned, version) == 0 &&
                  offsetof(DLManagedTensorVersioned, manager_ctx) == 8 &&
                  offsetof(DLManagedTensorVersioned, deleter) == 16 &&
                  offsetof(DLManagedTensorVersioned, flags) == 24 &&
                  offsetof(DLManagedTensorVersioned, dl_tensor) == 32 &&
                  sizeof(DLManagedTensorVersioned) == 80,
              "DLManagedTensorVersioned");
static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2,
              "flag bits");
static_assert(kDLCPU == 1 && kDLCUDA == 2 && kDLCUDAHost == 3 && kDLMetal == 8 && kDLROCM == 10 &&
                  kDLROCMHost == 11 && kDLCUDAManaged == 13 && kDLOneAPI == 14,
              "device types dlbridge maps");
// dlbridge's own value types: the layout keeps 8 dimensions inline (no allocation to import).
static_assert(dlbridge::TensorLayout::kInlineDims == 8, "inline dims");
static_assert(sizeof(dlbridge::TensorLayout) >= 16 * sizeof(int64_t), "inline storage");
