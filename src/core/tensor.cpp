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

}  // namespace

namespace detail {

void* CheckedElementZero(const Tensor& tensor, DLDataType requested) {
  const DLDataType dtype = tensor.layout.Dtype();
  // HLP-3: the element type must be the layout's dtype.
  if (!SameDataType(dtype, requested)) {
    Fail(ErrorCode::kInvalidDtype, "Tensor::Data<T>: T is " + DtypeText(requested) +
                                       " but the tensor's dtype is " + DtypeText(dtype) +
                                       "; call Data with the C++ type of " + DtypeText(dtype));
  }
  // HLP-4: only memory the CPU may read (the device table's host_addressable column).
  const MemorySpace space = tensor.descriptor.GetMemorySpaceKind();
  const int32_t type = tensor.device.device_type;
  const DeviceTypeInfo* row = type == 0 ? nullptr : FindDeviceType(type);
  const bool readable =
      space == MemorySpace::kHost && (type == 0 || (row && row->host_addressable));
  if (!readable) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string("Tensor::Data<T>: memory space \"") + tensor.descriptor.GetMemorySpace() +
             "\" (device type " +
             (type == 0 ? DeviceTypeName(DefaultDeviceType(space)) : DeviceTypeName(type)) +
             ") is not host-readable; Data gives pointers only to memory the CPU may read "
             "(space \"host\": " +
             DeviceTypeNames(
                 [](const DeviceTypeInfo& r) { return r.host_addressable; }) +  // see DEV-6
             "); copy it to the host first");
  }
  auto* base =
      reinterpret_cast<unsigned char*>(static_cast<intptr_t>(tensor.descriptor.GetPointer()));
  if (base == nullptr) return nullptr;
  return base + tensor.layout.ByteOffset();
}

}  // namespace detail
}  // namespace dlbridge
