// at::Tensor <-> dlbridge::Tensor (dlbridge/torch.h). This file includes ATen/ATen.h and
// dlbridge's DLPack 1.x headers together, which is safe: ATen/ATen.h does not include
// ATen/dlpack.h (only ATen/DLConvertor.h does; see aten_dlpack.cpp).
#include "dlbridge/torch.h"

#include <ATen/ATen.h>

#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <utility>

#include "aten_dlpack_internal.h"
#include "dlbridge/bridge_kit.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/owner.h"
#include "dlbridge/to_dlpack.h"

namespace dlbridge {
namespace torch {
namespace {

// The bridge's two calls, each failing through the kit's one path.
constexpr kit::Site kFromAten{"torch", "FromAten"};
constexpr kit::Site kToAten{"torch", "ToAten"};

// TOR-2: the dtypes libtorch and dlbridge both name, one row each; both directions read it, and
// the refusals list it. libtorch 1.13's own DLPack code has no bool (kDLBool is DLPack 0.8):
// ImportLegacy hands bool over as uint8. No complex32: dlbridge's dtype rule takes complex
// of 64 and 128 bits only.
struct DtypeRow {
  at::ScalarType scalar;
  DLDataType dtype;
};
constexpr DtypeRow kDtypes[] = {
    {at::kBool, DataTypeOf<bool>()},
    {at::kByte, DataTypeOf<uint8_t>()},
    {at::kChar, DataTypeOf<int8_t>()},
    {at::kShort, DataTypeOf<int16_t>()},
    {at::kInt, DataTypeOf<int32_t>()},
    {at::kLong, DataTypeOf<int64_t>()},
    {at::kHalf, {kDLFloat, 16, 1}},
    {at::kFloat, DataTypeOf<float>()},
    {at::kDouble, DataTypeOf<double>()},
    {at::kBFloat16, {kDLBfloat, 16, 1}},
    {at::kComplexFloat, DataTypeOf<std::complex<float>>()},
    {at::kComplexDouble, DataTypeOf<std::complex<double>>()},
};

std::string AcceptedDtypes() {
  std::string names;
  for (const DtypeRow& row : kDtypes) {
    if (!names.empty()) names += ", ";
    names += DtypeName(row.dtype);
  }
  return names;
}

DLDataType DtypeOfScalar(at::ScalarType scalar) {
  for (const DtypeRow& row : kDtypes) {
    if (row.scalar == scalar) return row.dtype;
  }
  kFromAten.Fail(ErrorCode::kUnsupportedDtype,
                 std::string("libtorch's dtype ") + c10::toString(scalar) +
                     " has no DLPack dtype; accepted: " + AcceptedDtypes());
}

bool IsLibtorchDtype(DLDataType dtype) {
  for (const DtypeRow& row : kDtypes) {
    if (SameDataType(row.dtype, dtype)) return true;
  }
  return false;
}

std::string LayoutName(at::Layout layout) {
  std::ostringstream name;
  name << layout;
  return name.str();
}

// TOR-3: what FromAten cannot describe without a copy, refused before anything is held.
void CheckShareable(const at::Tensor& tensor) {
  if (!tensor.defined()) {
    kFromAten.Fail(ErrorCode::kInvalidArgument,
                   "the at::Tensor is undefined (it holds no memory); pass a defined tensor");
  }
  if (tensor.layout() != at::kStrided) {
    kFromAten.Fail(ErrorCode::kInvalidArgument,
                   "the tensor's layout is " + LayoutName(tensor.layout()) +
                       "; only strided (dense) tensors share their memory: call to_dense() first");
  }
  if (!tensor.device().is_cpu()) {
    kFromAten.Fail(ErrorCode::kUnsupportedDevice,
                   "the tensor is on device " + tensor.device().str() +
                       "; accepted: cpu (call .cpu() first, which copies)");
  }
  if (tensor.is_conj() || tensor.is_neg()) {
    kFromAten.Fail(ErrorCode::kInvalidArgument,
                   std::string("the tensor has its ") +
                       (tensor.is_conj() ? "conjugate" : "negative") +
                       " bit set, so its memory does not hold its values; call resolve_conj() and "
                       "resolve_neg() first");
  }
}

// TOR-5: what libtorch 1.13 cannot take, refused while `tensor` still has its hold: libtorch's
// dtypes, then the kit's view checks (host-readable, writable, no negative stride:
// at::fromDLPack would end the process, aligned).
void CheckHandable(const dlbridge::Tensor& tensor) {
  // The dtype first, as the kit's order has it (see KIT-3): the kit's alignment is the
  // element's size, which a dtype libtorch has no type for must not be refused by.
  const DLDataType dtype = tensor.layout.Dtype();
  if (!IsLibtorchDtype(dtype)) {
    kToAten.Fail(
        ErrorCode::kUnsupportedDtype,
        "dtype " + kit::DtypeText(dtype) + " has no libtorch type; accepted: " + AcceptedDtypes());
  }
  kit::ViewNeeds needs;
  needs.view = "a libtorch tensor";
  needs.strides = kit::StrideRule::kNonNegative;
  needs.writes = true;  // libtorch has no read-only tensors
  needs.read_only_advice = "copy it, or drop the flag if the memory may be written";
  kit::CheckView(tensor, needs, kToAten);
}

}  // namespace

// TOR-1: the whole storage as the descriptor, element zero at the storage offset, a copy of
// the at::Tensor as the owner (one storage reference, dropped exactly once by shared_ptr).
dlbridge::Tensor FromAten(const at::Tensor& tensor) {
  try {
    CheckShareable(tensor);
    const DLDataType dtype = DtypeOfScalar(tensor.scalar_type());
    const at::Storage& storage = tensor.storage();
    dlbridge::Tensor result;
    result.descriptor.Set(storage.data_ptr().get(), static_cast<int64_t>(storage.nbytes()));
    const auto byteOffset =
        static_cast<uint64_t>(tensor.storage_offset()) * static_cast<uint64_t>(tensor.itemsize());
    result.layout = TensorLayout(dtype, tensor.sizes(), tensor.strides(), byteOffset);
    // The copy is the hold, rather than at::toDLPack's deleter: it keeps the storage offset
    // (toDLPack folds it into data), bool (toDLPack refuses it) and needs no DLPack 0.6 type.
    result.descriptor.SetOwner(MakeOwner(at::Tensor(tensor)));
    return result;
  } catch (const c10::Error& e) {
    kFromAten.Fail(ErrorCode::kInvalidArgument,
                   std::string("libtorch failed: ") + e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    kFromAten.Fail(ErrorCode::kOutOfMemory, "out of memory describing the tensor");
  }
}

// TOR-4: dlbridge's legacy export, handed to at::fromDLPack through the relay (see TOR-6).
at::Tensor ToAten(dlbridge::Tensor&& tensor) {
  CheckHandable(tensor);
  // Host-readable memory (pinned too, see HLP-4) is a CPU tensor to libtorch, which reads no
  // other host device type.
  // A refusal of ToDLPack's leaves the tensor as it was, its device too.
  const DLDevice declared = tensor.device;
  tensor.device = DLDevice{kDLCPU, 0};
  const bool asBool = tensor.layout.Dtype().code == kDLBool;
  DLManagedTensor* exported = nullptr;
  try {
    exported = ToDLPack(std::move(tensor));
  } catch (...) {
    tensor.device = declared;
    throw;
  }
  return detail::ImportLegacy(exported, asBool);
}

dlbridge::Tensor ToTensor(const at::Tensor& tensor) { return FromAten(tensor); }

at::Tensor Adopt(dlbridge::Tensor&& tensor) { return ToAten(std::move(tensor)); }

}  // namespace torch
}  // namespace dlbridge
