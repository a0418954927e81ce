// Copies: the one place __dlpack__ and from_dlpack make a copy (see PY-65), through the core's
// CopyTo (include/dlbridge/device_copy.h), which copies on the host what the host can read and
// through the CUDA driver or HIP runtime the rest, ordered after the data's pending writes and
// queued on the consumer's stream.
#include "py_internal.h"

namespace dlbpy {

// (see PY-10, see PY-35) The same bytes described as host memory instead of a copy: host-accessible
// memory going to (kDLCPU, 0) with no write pending on a stream (the host cannot wait for one
// without a copy, which then waits: PY-65).
bool ReachesHostWithoutCopy(const dlbridge::Tensor& t, DLDevice source, DLDevice target) {
  const bool pending = t.stream.has_value() && *t.stream != -1 &&
                       dlbridge::OrdersStreams(dlbridge::StreamFamilyOf(source.device_type));
  return target.device_type == kDLCPU && target.device_id == 0 && !pending &&
         !(source.device_type == target.device_type && source.device_id == target.device_id) &&
         dlbridge::IsHostAccessible(source.device_type);  // see DEV-5
}

// PY-65: the copy of every Python path that copies.
dlbridge::Tensor CopyPlanTo(const dlbridge::Tensor& source, const dlbridge::ExportPlan& plan,
                            DLDevice target, std::optional<int64_t> consumer) {
  dlbridge::CopyOptions options;
  options.producer_stream = source.stream;  // the copy waits for the source's pending writes
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
