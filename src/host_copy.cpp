// Host tensors (include/dlbridge/host_copy.h): allocation and the strided copy.
#include "dlbridge/host_copy.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "checked_math_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dtype.h"
#include "dlpack_rules.h"
#include "error_internal.h"

namespace dlbridge {
namespace {

using detail::Fail;

void FreeHostBlock(void* block) noexcept { std::free(block); }

// Copies the strided elements of `from` (element zero at `base`) in C order to `out`.
void CopyStrided(const unsigned char* base, const DLTensor& from, size_t item,
                 unsigned char* out) noexcept {
  if (from.ndim == 0) {
    std::memcpy(out, base, item);
    return;
  }
  int64_t index[TensorLayout::kMaxDims] = {};
  const int32_t last = from.ndim - 1;
  const auto step = static_cast<int64_t>(item);
  const size_t row = item * static_cast<size_t>(from.shape[last]);
  for (;;) {
    int64_t offset = 0;
    for (int32_t i = 0; i < last; ++i) offset += index[i] * from.strides[i];
    const unsigned char* in = base + offset * step;
    if (from.strides[last] == 1) {
      std::memcpy(out, in, row);
      out += row;
    } else {
      for (int64_t j = 0; j < from.shape[last]; ++j) {
        std::memcpy(out, in + j * from.strides[last] * step, item);
        out += item;
      }
    }
    int32_t dim = last - 1;
    while (dim >= 0 && ++index[dim] == from.shape[dim]) index[dim--] = 0;
    if (dim < 0) return;
  }
}

}  // namespace

// HC-1: C-contiguous, malloc'd, held by a release that frees it.
Tensor AllocateHostTensor(DLDataType dtype, int32_t ndim, const int64_t* shape) {
  detail::CheckDtypeOrThrow("AllocateHostTensor", dtype);
  TensorLayout layout = TensorLayout::FromArrays(dtype, ndim, shape, nullptr);
  int64_t bits = 0;
  if (detail::MulOverflows(layout.ElementCount(), int64_t{dtype.bits} * dtype.lanes, &bits)) {
    Fail(ErrorCode::kOverflow, "AllocateHostTensor: the tensor's size in bits overflows int64");
  }
  const int64_t bytes = bits / 8 + (bits % 8 != 0);
  void* block = std::malloc(bytes > 0 ? static_cast<size_t>(bytes) : 1);
  if (block == nullptr) {
    Fail(ErrorCode::kOutOfMemory,
         "AllocateHostTensor: could not allocate " + std::to_string(bytes) + " bytes");
  }
  Tensor t;
  t.descriptor.SetRelease(&FreeHostBlock, block);  // holds the block from here on
  t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(block)), bytes, "host");
  t.layout = std::move(layout);
  t.device = DLDevice{kDLCPU, 0};
  return t;
}

// HC-2: the plan's elements in C order into a new host tensor.
Tensor CopyToHost(const ExportPlan& plan) {
  const DLTensor from = plan.View();
  const DeviceTypeInfo* row = FindDeviceType(from.device.device_type);
  if (row == nullptr || !row->host_addressable) {  // HC-3
    Fail(ErrorCode::kUnsupportedDevice,
         std::string("CopyToHost: ") + DeviceTypeName(from.device.device_type) +
             " memory is not host-addressable; dlbridge copies only memory the CPU can read "
             "(the device types of memory space \"host\")");
  }
  const int64_t elementBits = int64_t{from.dtype.bits} * from.dtype.lanes;
  if (elementBits % 8 != 0) {  // HC-3
    Fail(ErrorCode::kUnsupportedDevice, "CopyToHost: " + DtypeName(from.dtype) +
                                            " elements are not whole bytes; dlbridge cannot "
                                            "copy sub-byte dtypes");
  }
  Tensor copy = AllocateHostTensor(from.dtype, from.ndim, from.shape);
  if (copy.descriptor.GetSizeInBytes() > 0) {
    auto* out =
        reinterpret_cast<unsigned char*>(static_cast<intptr_t>(copy.descriptor.GetPointer()));
    const auto* base = static_cast<const unsigned char*>(from.data) + from.byte_offset;
    if (plan.Layout().IsContiguous()) {
      std::memcpy(out, base, static_cast<size_t>(copy.descriptor.GetSizeInBytes()));
    } else {
      CopyStrided(base, from, static_cast<size_t>(elementBits / 8), out);
    }
  }
  return copy;
}

Tensor CopyToHost(const Tensor& tensor, const ExportOptions& options) {
  ExportOptions copying = options;
  copying.allow_unowned = true;  // the copy is done before this returns: nothing to keep alive
  return CopyToHost(ExportPlan(tensor, ExportKind::kVersioned, copying));
}

}  // namespace dlbridge
