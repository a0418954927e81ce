// Tensor::Data's checks (include/dlbridge/tensor.h): the dtype, then host readability.
#include "dlbridge/tensor.h"

#include <string>

#include "core/error_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dtype.h"

namespace dlbridge {
namespace {

// The dtype's name, or its raw fields where DtypeName refuses it (an unknown code).
std::string DtypeText(DLDataType dtype) {
  try {
    return DtypeName(dtype);
  } catch (const Error&) {
    return "(code " + std::to_string(dtype.code) + ", bits " + std::to_string(dtype.bits) +
           ", lanes " + std::to_string(dtype.lanes) + ")";
  }
}

// HLP-4: only memory the CPU may read (the device table's host_addressable column).
bool HostReadable(const Tensor& tensor) noexcept {
  const int32_t type = tensor.device.device_type;
  if (tensor.descriptor.GetMemorySpaceKind() != MemorySpace::kHost) return false;
  if (type == 0) return true;
  const DeviceTypeInfo* row = FindDeviceType(type);
  return row != nullptr && row->host_addressable;
}

// Why HostReadable refused, and what to do; without a caller's prefix.
std::string HostReadMessage(const Tensor& tensor) {
  const int32_t type = tensor.device.device_type;
  const MemorySpace space = tensor.descriptor.GetMemorySpaceKind();
  return std::string("memory space \"") + tensor.descriptor.GetMemorySpace() + "\" (device type " +
         (type == 0 ? DeviceTypeName(DefaultDeviceType(space)) : DeviceTypeName(type)) +
         ") is not host-readable; Data gives pointers only to memory the CPU may read "
         "(space \"host\": " +
         DeviceTypeNames([](const DeviceTypeInfo& r) { return r.host_addressable; }) +  // see DEV-6
         "); copy it to the host first";
}

}  // namespace

namespace detail {

std::string HostReadProblem(const Tensor& tensor) {
  return HostReadable(tensor) ? std::string() : HostReadMessage(tensor);
}

void* CheckedElementZero(const Tensor& tensor, DLDataType requested) {
  const DLDataType dtype = tensor.layout.Dtype();
  // HLP-3: the element type must be the layout's dtype.
  if (!SameDataType(dtype, requested)) {
    Fail(ErrorCode::kInvalidDtype, "Tensor::Data<T>: T is " + DtypeText(requested) +
                                       " but the tensor's dtype is " + DtypeText(dtype) +
                                       "; call Data with the C++ type of " + DtypeText(dtype));
  }
  if (!HostReadable(tensor)) {
    Fail(ErrorCode::kUnsupportedDevice, "Tensor::Data<T>: " + HostReadMessage(tensor));
  }
  auto* base =
      reinterpret_cast<unsigned char*>(static_cast<intptr_t>(tensor.descriptor.GetPointer()));
  if (base == nullptr) return nullptr;
  return base + tensor.layout.ByteOffset();
}

}  // namespace detail
}  // namespace dlbridge
