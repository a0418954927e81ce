// Device verification (src/devices/device_check_internal.h): export and import hold a GPU pointer
// against what its runtime says (spec/device-map.md GPU-*). Which runtime owns a device type,
// and its pinned-host type, are columns of the device table (src/devices/device_map.cpp); the
// runtimes are asked through src/runtimes/runtime_internal.h.
#include <cstdio>
#include <string>

#include "core/error_internal.h"
#include "devices/device_check_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/runtime.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {
namespace detail {
namespace {

std::string PointerText(const void* pointer) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "pointer %p", pointer);
  return buf;
}

// Why the runtime does not know a pointer, and what to do about it.
std::string UnknownText(GpuRuntime which, PointerKind kind, void* context, const char* skip) {
  if (which == GpuRuntime::kLevelZero) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%p", context);
    return std::string(" is not an allocation of Level Zero context ") + buf +
           " (zeMemGetAllocProperties: ZE_MEMORY_TYPE_UNKNOWN); pass the context it was "
           "allocated from";
  }
  return std::string(" is not memory the ") + GpuRuntimeName(which) + " runtime knows (" +
         (kind == PointerKind::kUnregisteredHost ? "unregistered host memory"
                                                 : "pageable host memory, freed memory, or "
                                                   "another runtime's") +
         "); describe host memory as \"host\", or " + skip;
}

// Which check asks: it decides how failures name the options and the way out.
enum class Side { kExport, kImport };

// The ask-the-runtime sequence of both checks. When the runtime cannot answer,
// `unavailable(its message)` runs first (it may throw), then verify kRequired fails with the
// runtime's error; otherwise returns false: the labels are accepted as given. A pointer the
// runtime does not know fails (kUnknownPointer), saying `claim()`: what the caller says the
// memory is. Otherwise returns true with `*p` what the runtime says.
template <class Unavailable, class Claim>
bool AskAbout(const char* where, Side side, DeviceVerification verify, GpuRuntime which,
              const void* pointer, void* level_zero_context, Unavailable&& unavailable,
              Claim&& claim, PointerInfo* p) {
  const RuntimeAnswer answer = AskRuntime(where, which, pointer, level_zero_context);
  if (answer.unavailable != nullptr) {
    unavailable(answer.unavailable->message);
    if (verify == DeviceVerification::kRequired) {
      Fail(CodeFor(answer.unavailable->status),
           std::string(where) + (side == Side::kExport ? ": ExportOptions" : ": ImportOptions") +
               "::verify_device is kRequired but " + answer.unavailable->message);
    }
    return false;
  }
  *p = answer.pointer;
  if (p->kind == PointerKind::kUnknown || p->kind == PointerKind::kUnregisteredHost) {
    Fail(ErrorCode::kUnknownPointer,
         std::string(where) + ": " + claim() + " but " + PointerText(pointer) +
             UnknownText(which, p->kind, level_zero_context,
                         side == Side::kExport ? "give the device id and set "
                                                 "ExportOptions::verify_device to kOff to "
                                                 "export it unchecked"
                                               : "set ImportOptions::verify_device to kOff to "
                                                 "accept it unchecked"));
  }
  return true;
}

// CheckExportDevice for a GPU space. Out of line, so that a host export (every export of
// host memory) returns from CheckExportDevice without this function's frame.
[[gnu::noinline]] void CheckGpuExportDevice(const char* where, MemorySpace space, bool type_given,
                                            DLDevice* device, const void* pointer,
                                            DeviceVerification verify, void* level_zero_context,
                                            void* level_zero_device) {
  // The resolved type is a type of `space` (the caller checked), so its runtime is the space's.
  const DeviceTypeInfo* row = FindDeviceType(device->device_type);
  const bool need_id = !row->id_is_zero && device->device_id < 0;
  if (!need_id && verify == DeviceVerification::kOff) return;  // GPU-8: no query at all
  const GpuRuntime which = row->runtime;
  const std::string name = GpuRuntimeName(which);
  auto missing = [&](const std::string& why) {
    Fail(ErrorCode::kMissingDeviceId,
         std::string(where) + ": memory space \"" + MemorySpaceName(space) +
             "\" needs a device ordinal and " + why,
         ErrorAdvice::kGiveDeviceId, row->name);
  };
  if (pointer == nullptr) {
    if (need_id)
      missing("an empty descriptor has no pointer to ask the " + name + " runtime about");
    return;
  }
  PointerInfo p;
  const bool answered = AskAbout(
      where, Side::kExport, verify, which, pointer, level_zero_context,
      [&](const std::string& why) {
        if (need_id) missing("it could not be read from the pointer: " + why);
      },
      [&] { return std::string("memory space \"") + MemorySpaceName(space) + "\""; }, &p);
  if (!answered) return;
  const std::string at = " " + PointerText(pointer);
  switch (p.kind) {
    case PointerKind::kUnknown:
    case PointerKind::kUnregisteredHost: break;  // refused by AskAbout
    case PointerKind::kPinnedHost: {
      if (row->pinned_host_type == 0) break;  // host USM stays kDLOneAPI (see GPU-10)
      const char* host = DeviceTypeName(row->pinned_host_type);
      if (type_given) {
        Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": the tensor's device says " +
                                             row->name + " but the " + name +
                                             " runtime reports that" + at +
                                             " is pinned host memory; describe it as \"host\" "
                                             "(with the tensor's device {" +
                                             host +
                                             ", 0} if wanted), or leave the tensor's device "
                                             "unset to export it as " +
                                             host);
      }
      *device = DLDevice{static_cast<DLDeviceType>(row->pinned_host_type), 0};  // GPU-4
      return;
    }
    case PointerKind::kManaged:
      if (which == GpuRuntime::kCuda) {
        // GPU-3: unlabelled managed memory is kDLCUDAManaged; a given ordinal is accepted,
        // since managed memory is addressable from every device.
        if (need_id && !type_given) *device = DLDevice{kDLCUDAManaged, 0};
        return;
      }
      if (which == GpuRuntime::kHip && !need_id) return;
      break;
    case PointerKind::kDevice:
      if (device->device_type == kDLCUDAManaged) {
        Fail(ErrorCode::kDeviceMismatch,
             std::string(where) +
                 ": the tensor's device says kDLCUDAManaged but the CUDA runtime "
                 "reports that" +
                 at +
                 " is device memory, not managed memory; "
                 "use {kDLCUDA, ordinal} or leave the tensor's device unset");
      }
      break;
  }
  std::string error;
  int32_t ordinal = p.device_ordinal;
  if (ordinal < 0 && which == GpuRuntime::kLevelZero && level_zero_device != nullptr) {
    ordinal = LevelZeroDeviceIndex(level_zero_device, &error);  // host USM: the caller's device
  }
  if (ordinal < 0) {
    if (need_id)
      missing("the " + name + " runtime names no device for" + at +
              (error.empty() ? std::string() : ": " + error));
    return;
  }
  if (need_id) {  // GPU-2: a missing id is resolved from the pointer
    device->device_id = ordinal;
  } else if (device->device_id != ordinal) {
    Fail(ErrorCode::kDeviceMismatch,
         std::string(where) + ": device_id " + std::to_string(device->device_id) +
             " contradicts the " + name + " runtime:" + at + " belongs to device " +
             std::to_string(ordinal) + "; give " + std::to_string(ordinal) +
             " or leave the id unset to take it from the pointer");
  }
}

}  // namespace

void CheckExportDevice(const char* where, MemorySpace space, bool type_given, DLDevice* device,
                       const void* pointer, DeviceVerification verify, void* level_zero_context,
                       void* level_zero_device) {
  if (space == MemorySpace::kHost) return;  // GPU-8: host memory has no runtime to ask
  CheckGpuExportDevice(where, space, type_given, device, pointer, verify, level_zero_context,
                       level_zero_device);
}

// GPU-5: the kind and ordinal the runtime reports must agree with the producer's device where
// the runtime can answer (kRequired: or fail); kOff asks nothing.
void CheckImportDevice(const char* where, DLDevice device, const void* pointer,
                       DeviceVerification verify, void* level_zero_context) {
  if (verify == DeviceVerification::kOff || pointer == nullptr) return;
  const DeviceTypeInfo* row = FindDeviceType(static_cast<int32_t>(device.device_type));
  if (row == nullptr || !row->has_runtime) return;  // host-like types need no runtime
  const GpuRuntime which = row->runtime;
  const std::string name = GpuRuntimeName(which);
  const char* type = row->name;
  PointerInfo p;
  const bool answered = AskAbout(
      where, Side::kImport, verify, which, pointer, level_zero_context, [](const std::string&) {},
      [&] { return std::string("the producer says ") + type; }, &p);
  if (!answered) return;
  const std::string at = " " + PointerText(pointer);
  switch (p.kind) {
    case PointerKind::kUnknown:
    case PointerKind::kUnregisteredHost: break;  // refused by AskAbout
    case PointerKind::kPinnedHost:
      if (row->pinned_host_type == 0) break;  // host USM stays kDLOneAPI (see GPU-10)
      Fail(ErrorCode::kDeviceMismatch,
           std::string(where) + ": the producer says " + type + " but the " + name +
               " runtime reports that" + at + " is pinned host memory; the producer should say " +
               DeviceTypeName(row->pinned_host_type) +
               " (set ImportOptions::verify_device to kOff to accept it as is)");
    case PointerKind::kManaged:
      if (which != GpuRuntime::kLevelZero) return;  // addressable from every device
      break;
    case PointerKind::kDevice:
      if (device.device_type == kDLCUDAManaged) {
        Fail(ErrorCode::kDeviceMismatch,
             std::string(where) +
                 ": the producer says kDLCUDAManaged but the CUDA runtime "
                 "reports that" +
                 at + " is device memory, not managed memory");
      }
      break;
  }
  if (p.device_ordinal >= 0 && p.device_ordinal != device.device_id) {
    Fail(ErrorCode::kDeviceMismatch,
         std::string(where) + ": device_id " + std::to_string(device.device_id) + " (" + type +
             ") contradicts the " + name + " runtime:" + at + " belongs to device " +
             std::to_string(p.device_ordinal) +
             " (set ImportOptions::verify_device to kOff to accept it as is)");
  }
}

}  // namespace detail
}  // namespace dlbridge
