// Copies: the one place __dlpack__ and from_dlpack make a copy (see PY-65), through the core's
// CopyTo (include/dlbridge/device_copy.h), which copies on the host what the host can read and
// through the CUDA driver or HIP runtime the rest, ordered after the data's pending writes and
// queued on the consumer's stream.
#include "py_internal.h"

namespace dlbpy {

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
