// The HIP backend: libamdhip64.so.<major> loaded on first use. Types come from
// hip/hip_runtime_api.h at build time (DLBRIDGE_WITH_HIP); the memory-type numbering is read
// from the runtime's own version, since ROCm 6 renumbered it.
#include "runtimes/runtime_backend_internal.h"

#if DLBRIDGE_WITH_HIP
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#endif

#include <string>

namespace dlbridge {
namespace detail {

// ROCm <= 5: hipMemoryTypeHost 0, Device 1, Array 2, Unified 3, Managed 4 (5.3+).
// ROCm >= 6: Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11.
PointerKind HipPointerKind(int major, int type, bool managed) {
  if (managed) return PointerKind::kManaged;
  if (major >= 6) {
    switch (type) {
      case 0: return PointerKind::kUnregisteredHost;
      case 1: return PointerKind::kPinnedHost;
      case 2:
      case 10: return PointerKind::kDevice;
      case 3:
      case 11: return PointerKind::kManaged;
      default: return PointerKind::kUnknown;
    }
  }
  switch (type) {
    case 0: return PointerKind::kPinnedHost;
    case 1:
    case 2: return PointerKind::kDevice;
    case 3:
    case 4: return PointerKind::kManaged;
    default: return PointerKind::kUnknown;
  }
}

namespace {

#if DLBRIDGE_WITH_HIP

// The way around a missing runtime, in words of no one API (see runtime_cuda.cpp).
constexpr const char* kNoIdHint = "; without a usable HIP runtime, give the device id";

// ROCm 5 and 6 share the struct's layout; 6 renamed `memoryType` to `type` and renumbered it.
// The first member is read by offset so that either header compiles.
static_assert(offsetof(hipPointerAttribute_t, device) == sizeof(int),
              "hipPointerAttribute_t: the memory type is the first int");

struct HipState : BackendState {
  int major = 0;
  decltype(&::hipPointerGetAttributes) pointer_get_attributes = nullptr;
  decltype(&::hipGetErrorName) get_error_name = nullptr;
  // Stream ordering (OrderStreams); optional at load, so that pointer queries work without.
  decltype(&::hipGetDevice) get_device = nullptr;
  decltype(&::hipSetDevice) set_device = nullptr;
  decltype(&::hipEventCreateWithFlags) event_create = nullptr;
  decltype(&::hipEventRecord) event_record = nullptr;
  decltype(&::hipStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::hipEventDestroy) event_destroy = nullptr;
  // Copies (CopyTo); optional at load like the ordering entry points.
  hipError_t (*hip_malloc)(void**, size_t) = nullptr;  // hipMalloc is overloaded in C++
  decltype(&::hipFree) hip_free = nullptr;
  decltype(&::hipMemcpyAsync) memcpy_async = nullptr;
  decltype(&::hipStreamSynchronize) stream_synchronize = nullptr;
  EventPool events;  ///< OrderStreams' events, per device (see STR-10)

  std::string ErrorName(hipError_t e) const {
    const char* name = get_error_name != nullptr ? get_error_name(e) : nullptr;
    return name != nullptr ? name : "hipError_t " + std::to_string(static_cast<int>(e));
  }

  void Load() {
    const std::string chosen = LibraryOverride(has_override, override_path, "DLBRIDGE_HIP_LIBRARY");
    std::vector<std::string> names;
    if (chosen.empty()) {
      names = HipRuntimeNames();
    } else {
      names = {chosen};
    }
    std::string errors;
    void* handle = OpenFirst(names, &info.library, &errors);
    if (handle == nullptr) {
      info.library = chosen.empty() ? kHipRuntimePattern : chosen;
      SetStatus(RuntimeStatus::kNotInstalled,
                "HIP: the runtime library " + info.library + " is not installed (" + errors +
                    "); install ROCm's HIP runtime (e.g. Debian's libamdhip64-5)" + kNoIdHint);
      return;
    }
    auto runtime_version =
        reinterpret_cast<decltype(&::hipRuntimeGetVersion)>(Symbol(handle, "hipRuntimeGetVersion"));
    auto device_count =
        reinterpret_cast<decltype(&::hipGetDeviceCount)>(Symbol(handle, "hipGetDeviceCount"));
    pointer_get_attributes = reinterpret_cast<decltype(&::hipPointerGetAttributes)>(
        Symbol(handle, "hipPointerGetAttributes"));
    get_error_name =
        reinterpret_cast<decltype(&::hipGetErrorName)>(Symbol(handle, "hipGetErrorName"));
    get_device = reinterpret_cast<decltype(&::hipGetDevice)>(Symbol(handle, "hipGetDevice"));
    set_device = reinterpret_cast<decltype(&::hipSetDevice)>(Symbol(handle, "hipSetDevice"));
    event_create = reinterpret_cast<decltype(&::hipEventCreateWithFlags)>(
        Symbol(handle, "hipEventCreateWithFlags"));
    event_record = reinterpret_cast<decltype(&::hipEventRecord)>(Symbol(handle, "hipEventRecord"));
    stream_wait_event =
        reinterpret_cast<decltype(&::hipStreamWaitEvent)>(Symbol(handle, "hipStreamWaitEvent"));
    event_destroy =
        reinterpret_cast<decltype(&::hipEventDestroy)>(Symbol(handle, "hipEventDestroy"));
    hip_malloc = reinterpret_cast<hipError_t (*)(void**, size_t)>(Symbol(handle, "hipMalloc"));
    hip_free = reinterpret_cast<decltype(&::hipFree)>(Symbol(handle, "hipFree"));
    memcpy_async = reinterpret_cast<decltype(&::hipMemcpyAsync)>(Symbol(handle, "hipMemcpyAsync"));
    stream_synchronize =
        reinterpret_cast<decltype(&::hipStreamSynchronize)>(Symbol(handle, "hipStreamSynchronize"));
    if (runtime_version == nullptr || device_count == nullptr ||
        pointer_get_attributes == nullptr) {
      SetStatus(RuntimeStatus::kFailed, "HIP: " + info.library +
                                            " lacks hipRuntimeGetVersion, hipGetDeviceCount or "
                                            "hipPointerGetAttributes: it is not a HIP runtime" +
                                            kNoIdHint);
      return;
    }
    // HIP_VERSION = major * 10'000'000 + minor * 100'000 + patch.
    if (runtime_version(&info.version) == hipSuccess && info.version > 0) {
      major = info.version / 10000000;
    } else {
      info.version = 0;
      const std::string& lib = info.library;
      const size_t dot = lib.rfind(".so.");
      major = dot != std::string::npos ? std::atoi(lib.c_str() + dot + 4) : 5;
    }
    int count = 0;
    const hipError_t e = device_count(&count);
    if (e == hipErrorNoDevice || (e == hipSuccess && count == 0)) {  // see GPU-7
      SetStatus(RuntimeStatus::kNoDevice,
                "HIP: the runtime (version " + std::to_string(info.version) +
                    ") reports no AMD GPU (" + ErrorName(e) +
                    "); check rocminfo, /dev/kfd access and HIP_VISIBLE_DEVICES" + kNoIdHint);
      return;
    }
    if (e == hipErrorNotInitialized || e == hipErrorInsufficientDriver) {
      SetStatus(RuntimeStatus::kNotInitialized,
                "HIP: the runtime could not be initialised (" + ErrorName(e) +
                    "); the amdgpu kernel driver is missing or too old for this runtime" +
                    kNoIdHint);
      return;
    }
    if (e != hipSuccess) {
      SetStatus(RuntimeStatus::kFailed,
                "HIP: hipGetDeviceCount failed (" + ErrorName(e) + ")" + kNoIdHint);
      return;
    }
    info.status = RuntimeStatus::kReady;
  }
};

class HipBackendImpl final : public LazyBackend<HipState> {
 public:
  RuntimeStatus Query(const void* pointer, void*, PointerInfo* out, std::string* error) override {
    HipState& s = Loaded();
    hipPointerAttribute_t attributes;
    std::memset(&attributes, 0, sizeof attributes);
    const hipError_t e = s.pointer_get_attributes(&attributes, pointer);
    PointerInfo info;
    if (e == hipErrorInvalidValue) {  // ROCm 5: a pointer HIP does not know
      *out = info;
      return RuntimeStatus::kReady;
    }
    if (e != hipSuccess) {
      const bool uninit = e == hipErrorNotInitialized || e == hipErrorDeinitialized;
      *error = "HIP: hipPointerGetAttributes failed (" + s.ErrorName(e) + ")" +
               (uninit ? "; the runtime is not initialised" : "") +
               "; give the device id and set verify_device to kOff to skip the query";
      return uninit ? RuntimeStatus::kNotInitialized : RuntimeStatus::kFailed;
    }
    int type = 0;
    std::memcpy(&type, &attributes, sizeof type);
    info.kind = HipPointerKind(s.major, type, attributes.isManaged != 0);
    info.device_ordinal =
        info.kind == PointerKind::kUnknown || info.kind == PointerKind::kUnregisteredHost
            ? -1
            : attributes.device;
    *out = info;
    return RuntimeStatus::kReady;
  }

  // STR-4: event on the producer, wait on the consumer, with device_id selected; the event
  // comes from the device's pool and goes back once the wait is queued (see STR-10), and the
  // caller's device is selected again on the way out, success or failure.
  bool OrderStreams(int32_t device_id, int64_t producer, int64_t consumer,
                    std::string* error) override {
    HipState& s = Loaded();
    if (s.get_device == nullptr || s.set_device == nullptr || s.event_create == nullptr ||
        s.event_record == nullptr || s.stream_wait_event == nullptr || s.event_destroy == nullptr) {
      *error = "HIP: " + s.info.library +
               " lacks hipGetDevice, hipSetDevice, hipEventCreateWithFlags, hipEventRecord, "
               "hipStreamWaitEvent or hipEventDestroy; install a complete HIP runtime";
      return false;
    }
    return OnDevice(s, device_id, error, [&] {
      hipEvent_t event = static_cast<hipEvent_t>(s.events.Take(device_id));
      const bool pooled = event != nullptr;
      if (!pooled && !Fresh(s, &event, error)) return false;
      hipError_t e = s.event_record(event, Stream(producer));
      if (e != hipSuccess && pooled) {  // a pooled event the runtime no longer knows
        (void)s.event_destroy(event);
        if (!Fresh(s, &event, error)) return false;
        e = s.event_record(event, Stream(producer));
      }
      if (e != hipSuccess) {
        Failed(s, error, "hipEventRecord", e);
        (void)s.event_destroy(event);
        return false;
      }
      e = s.stream_wait_event(Stream(consumer), event, 0);
      if (e != hipSuccess) {
        Failed(s, error, "hipStreamWaitEvent", e);
        (void)s.event_destroy(event);
        return false;
      }
      if (s.events.Give(device_id, event)) return true;  // the wait keeps its effect
      e = s.event_destroy(event);
      return e == hipSuccess || Failed(s, error, "hipEventDestroy", e);
    });
  }

  // hipMalloc / hipFree / hipMemcpyAsync with device_id selected (see CPY-3).
  bool Allocate(const CopyPlace& place, size_t bytes, void** pointer, std::string* error) override {
    HipState& s = Loaded();
    *pointer = nullptr;
    if (!CanCopy(s, error)) return false;
    const bool ok = OnDevice(s, place.device_id, error, [&] {
      const hipError_t e = s.hip_malloc(pointer, bytes);
      if (e == hipSuccess) return true;
      *pointer = nullptr;
      return Failed(s, error, "hipMalloc", e);
    });
    if (!ok && *pointer != nullptr) {  // allocated, then restoring the caller's device failed
      std::string ignored;
      (void)OnDevice(s, place.device_id, &ignored,
                     [&] { return s.hip_free(*pointer) == hipSuccess; });
      *pointer = nullptr;
    }
    return ok;
  }

  bool Free(const CopyPlace& place, void* pointer, std::string* error) override {
    HipState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    return OnDevice(s, place.device_id, error, [&] {
      const hipError_t e = s.hip_free(pointer);
      return e == hipSuccess || Failed(s, error, "hipFree", e);
    });
  }

  bool Copy(const CopyPlace& place, CopyDirection direction, void* to, const void* from,
            size_t bytes, int64_t stream, bool wait, std::string* error) override {
    HipState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    return OnDevice(s, place.device_id, error, [&] {
      const hipMemcpyKind kind = direction == CopyDirection::kHostToDevice ? hipMemcpyHostToDevice
                                 : direction == CopyDirection::kDeviceToHost
                                     ? hipMemcpyDeviceToHost
                                     : hipMemcpyDeviceToDevice;
      if (bytes > 0) {
        const hipError_t e = s.memcpy_async(to, from, bytes, kind, Stream(stream));
        if (e != hipSuccess) return Failed(s, error, "hipMemcpyAsync", e);
      }
      if (!wait) return true;
      const hipError_t e = s.stream_synchronize(Stream(stream));
      return e == hipSuccess || Failed(s, error, "hipStreamSynchronize", e);
    });
  }

  void DrainEventPool() override {
    HipState* s = Peek();  // never loads the runtime only to find an empty pool
    if (s == nullptr || s->event_destroy == nullptr) return;
    for (const auto& e : s->events.TakeAll()) {
      (void)s->event_destroy(static_cast<hipEvent_t>(e.second));
    }
  }

 private:
  static hipStream_t Stream(int64_t value) {
    return reinterpret_cast<hipStream_t>(static_cast<intptr_t>(value));
  }
  static bool Failed(const HipState& s, std::string* error, const char* call, hipError_t e) {
    if (error->empty()) *error = std::string(call) + " failed: " + s.ErrorName(e);
    return false;
  }
  static bool Fresh(HipState& s, hipEvent_t* event, std::string* error) {
    const hipError_t e = s.event_create(event, hipEventDisableTiming);
    return e == hipSuccess || Failed(s, error, "hipEventCreateWithFlags", e);
  }
  static bool CanCopy(const HipState& s, std::string* error) {
    if (s.get_device != nullptr && s.set_device != nullptr && s.hip_malloc != nullptr &&
        s.hip_free != nullptr && s.memcpy_async != nullptr && s.stream_synchronize != nullptr) {
      return true;
    }
    *error = "HIP: " + s.info.library +
             " lacks hipGetDevice, hipSetDevice, hipMalloc, hipFree, hipMemcpyAsync or "
             "hipStreamSynchronize; install a complete HIP runtime";
    return false;
  }
  // Runs `body()` with device_id selected (hipGetDevice, hipSetDevice when it differs), then
  // selects the caller's device again, whatever fails.
  template <class Body>
  static bool OnDevice(HipState& s, int32_t device_id, std::string* error, Body body) {
    int previous = 0;
    hipError_t e = s.get_device(&previous);
    if (e != hipSuccess) return Failed(s, error, "hipGetDevice", e);
    const bool switched = previous != device_id;
    if (switched) {
      e = s.set_device(device_id);
      if (e != hipSuccess) return Failed(s, error, "hipSetDevice", e);
    }
    bool ok = body();
    if (switched) {
      e = s.set_device(previous);
      if (e != hipSuccess) ok = Failed(s, error, "hipSetDevice (restoring the caller's device)", e);
    }
    return ok;
  }
};

#endif

}  // namespace

Backend* MakeHipBackend() {
#if DLBRIDGE_WITH_HIP
  return new HipBackendImpl();
#else
  return new DisabledBackend("libamdhip64.so",
                             "HIP: this build of dlbridge has the HIP backend switched off "
                             "(DLBRIDGE_WITH_HIP=OFF); rebuild with the HIP headers, or give "
                             "the device id");
#endif
}

}  // namespace detail
}  // namespace dlbridge
