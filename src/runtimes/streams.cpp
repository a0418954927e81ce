// Stream ordering (include/dlbridge/runtime.h; spec/streams.md STR-*): which stream values a
// device accepts, when an exchange needs ordering, and the errors around the backends' event
// calls (src/runtimes/runtime_cuda.cpp, src/runtimes/runtime_hip.cpp).
#include <cstdio>
#include <string>

#include "core/error_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/runtime.h"
#include "runtimes/runtime_backend_internal.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {

using detail::Fail;

namespace {

std::string DeviceText(DLDevice device) {
  return std::string(DeviceTypeName(device.device_type)) + " device " +
         std::to_string(device.device_id);
}

// A handle in hex, as debuggers and driver logs show it; the special values as they are.
std::string StreamText(int64_t stream) {
  if (stream <= 2) return std::to_string(stream);
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(stream));
  return text;
}

}  // namespace

// STR-1: the Python DLPack protocol's stream values, per device type.
void CheckStreamValue(DLDevice device, int64_t stream, const char* argument) {
  const std::string what = std::string(argument != nullptr ? argument : "stream") + " " +
                           std::to_string(stream) + " is illegal for " +
                           DeviceTypeName(device.device_type);
  switch (StreamFamilyOf(device.device_type)) {  // the device table's column (see DEV-5)
    case StreamFamily::kNone:
      Fail(ErrorCode::kInvalidArgument,
           what + " memory, which has no streams; pass no stream (Python: None)");
    case StreamFamily::kCuda:
      if (stream == 0 || stream < -1) {
        Fail(ErrorCode::kInvalidArgument,
             what +
                 "; accepted for CUDA: 1 (the legacy default stream; Python: None), 2 (the "
                 "per-thread default stream), > 2 (a CUstream / cudaStream_t), -1 (order "
                 "nothing)");
      }
      return;
    case StreamFamily::kRocm:
      if (stream == 1 || stream == 2 || stream < -1) {
        Fail(ErrorCode::kInvalidArgument,
             what +
                 "; accepted for ROCm: 0 (the null stream; Python: None), > 2 (a "
                 "hipStream_t), -1 (order nothing)");
      }
      return;
    case StreamFamily::kUnspecified: return;  // DLPack defines no stream convention for them
  }
}

bool OrderStreams(DLDevice device, int64_t producer, int64_t consumer) {
  const StreamFamily family = StreamFamilyOf(device.device_type);  // the device table's column
  if (!OrdersStreams(family)) return false;
  CheckStreamValue(device, producer, "OrderStreams: producer");
  CheckStreamValue(device, consumer, "OrderStreams: consumer");
  // STR-2: -1 orders nothing (the protocol's "no synchronisation"), and work queued on one
  // stream is already ordered; decided before any runtime is loaded.
  if (producer == -1 || consumer == -1 || producer == consumer) return false;
  // The runtime whose streams these are: the device table's copy_runtime column (a family that
  // orders streams has one, see DEV-6).
  const GpuRuntime runtime = FindDeviceType(device.device_type)->copy_runtime;
  // STR-6: a runtime that cannot be used is an error only here, where ordering is needed.
  // The message is built only then (UnusableRuntime, the answer ReadyBackend gives).
  if (const RuntimeInfo* info = detail::UnusableRuntime(runtime)) {
    Fail(detail::CodeFor(info->status),
         "OrderStreams: stream " + StreamText(consumer) + " of " + DeviceText(device) +
             " cannot be ordered after stream " + StreamText(producer) + ": " + info->message);
  }
  detail::Backend& backend = detail::BackendOf(runtime);
  std::string error;
  // STR-5: a failed driver call is named, with its error and the device.
  if (!backend.OrderStreams(device.device_id, producer, consumer, &error)) {
    Fail(ErrorCode::kRuntimeUnavailable,
         "OrderStreams: " + error + " (ordering stream " + StreamText(consumer) + " after stream " +
             StreamText(producer) + " of " + DeviceText(device) +
             "); do not rely on the ordering: synchronise the producer stream before the "
             "consumer uses the memory");
  }
  return true;
}

}  // namespace dlbridge
