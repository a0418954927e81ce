// Copies: the one place __dlpack__ and from_dlpack decide how a copy is made (see PY-65): on the
// host when the host can read the data and nothing is pending on a stream (no runtime needed),
// else through the core's CopyTo (include/dlbridge/device_copy.h), ordered after the data's
// pending writes and queued on the consumer's stream.
#include "py_internal.h"

namespace dlbpy {
namespace {

// The no-op release of CopyPlanToHost's host view: the view borrows the tensor's memory for
// the copy's duration only (the tensor keeps the real hold), yet counts as held.
void BorrowedForCopy(void*) noexcept {}

}  // namespace

dlbridge::Tensor CopyPlanToHost(const dlbridge::Tensor& source, const dlbridge::ExportPlan& plan) {
  const dlbridge::DeviceTypeInfo* row = dlbridge::FindDeviceType(plan.Device().device_type);
  if (row == nullptr || row->host_addressable || !row->host_accessible) {
    return dlbridge::CopyToHost(plan);  // the core's copy, and its refusal of device memory
  }
  // Managed memory: the core reads host memory only, so it copies a host view of the same
  // bytes (the same layout, checked again as an export).
  dlbridge::Tensor view;
  view.descriptor.Set(source.descriptor.GetPointer(), source.descriptor.GetSizeInBytes(), "host");
  view.descriptor.SetRelease(&BorrowedForCopy, nullptr);
  view.layout = source.layout;
  view.device = DLDevice{kDLCPU, 0};
  // The bits that say how to read the elements stay (padded sub-byte); IS_COPIED does not.
  view.flags =
      source.flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  return dlbridge::CopyToHost(view);
}

// PY-65: the copy of every Python path that copies.
dlbridge::Tensor CopyPlanTo(const dlbridge::Tensor& source, const dlbridge::ExportPlan& plan,
                            DLDevice target, std::optional<int64_t> consumer) {
  const bool pending = source.stream.has_value() && *source.stream != -1;
  if (target.device_type == kDLCPU && target.device_id == 0 && !pending &&
      dlbridge::IsHostAccessible(plan.Device().device_type)) {  // see DEV-5
    return CopyPlanToHost(source, plan);
  }
  dlbridge::CopyOptions options;
  options.producer_stream = source.stream;  // the core orders the copy after it (see CPY-*)
  // Queued on the consumer's stream where it names one of the target's runtime (-1 orders
  // nothing, so the runtime's default stream takes it), and complete before it returns: the
  // source may be dropped as soon as the caller has the copy.
  if (consumer.has_value() && *consumer != -1 &&
      dlbridge::OrdersStreams(dlbridge::StreamFamilyOf(target.device_type))) {
    options.stream = consumer;
  }
  options.synchronous = true;
  return dlbridge::CopyTo(plan, target, options);
}

}  // namespace dlbpy
