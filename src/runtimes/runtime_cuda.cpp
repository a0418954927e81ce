// The CUDA backend: the driver API, loaded on first use from libcuda.so.1. Entry points come
// from cuGetProcAddress; types from the toolkit's cuda.h at build time (DLBRIDGE_WITH_CUDA).
#include "runtimes/runtime_backend_internal.h"

#if DLBRIDGE_WITH_CUDA
#include <cuda.h>
#endif

#include <cstdint>
#include <string>

namespace dlbridge {
namespace detail {
namespace {

#if DLBRIDGE_WITH_CUDA

constexpr const char* kDefaultLibrary = kCudaDriverLibrary;
// The way around a missing driver, in words of no one API (the export that needs the id adds
// its own advice, ErrorAdvice::kGiveDeviceId).
constexpr const char* kNoIdHint = "; without a driver, give the device id";

// Full v2 signature (CUDA >= 12.0) and the older four-argument one.
using GetProcV2 = CUresult (*)(const char*, void**, int, cuuint64_t,
                               CUdriverProcAddressQueryResult*);
using GetProcV1 = CUresult (*)(const char*, void**, int, cuuint64_t);

struct CudaState : BackendState {
  decltype(&::cuPointerGetAttributes) pointer_get_attributes = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  // Stream ordering (OrderStreams); optional at load, so that pointer queries work without.
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primary_ctx_release = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  std::string missing_stream_entry;  ///< the first ordering entry point the driver lacks
  // Copies (CopyTo); optional at load like the ordering entry points.
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod = nullptr;
  decltype(&::cuMemcpyDtoHAsync) memcpy_dtoh = nullptr;
  decltype(&::cuMemcpyDtoDAsync) memcpy_dtod = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  bool copies = false;  ///< every copy entry point was found
  EventPool events;     ///< OrderStreams' events, per device (see STR-10)

  std::string ErrorName(CUresult r) const {
    const char* name = nullptr;
    if (get_error_name != nullptr && get_error_name(r, &name) == CUDA_SUCCESS && name != nullptr) {
      return name;
    }
    return "CUresult " + std::to_string(static_cast<int>(r));
  }

  void StubFailure() {
    SetStatus(
        RuntimeStatus::kStubLibrary,
        "CUDA: " + info.library +
            " is the CUDA toolkit's link-time stub (CUDA_ERROR_STUB_LIBRARY), not the driver; "
            "install the NVIDIA driver (it provides libcuda.so.1) or take the toolkit's "
            "lib64/stubs directory out of LD_LIBRARY_PATH" +
            kNoIdHint);
  }

  // Maps an initialisation failure onto a status and a message with what to do.
  void InitFailure(const char* call, CUresult r) {
    switch (r) {
      case CUDA_ERROR_STUB_LIBRARY: StubFailure(); return;
      case CUDA_ERROR_NO_DEVICE:
        SetStatus(RuntimeStatus::kNoDevice, std::string("CUDA: ") + call +
                                                " reports no CUDA device (" + ErrorName(r) +
                                                "); check nvidia-smi and "
                                                "CUDA_VISIBLE_DEVICES" +
                                                kNoIdHint);
        return;
      case CUDA_ERROR_NOT_INITIALIZED:
      case CUDA_ERROR_DEINITIALIZED:
        SetStatus(RuntimeStatus::kNotInitialized,
                  std::string("CUDA: the driver is not initialised (") + call + ": " +
                      ErrorName(r) +
                      "); it cannot be used in a child forked from a CUDA process or while the "
                      "process exits" +
                      kNoIdHint);
        return;
      default:
        SetStatus(RuntimeStatus::kFailed, std::string("CUDA: ") + call + " failed (" +
                                              ErrorName(r) +
                                              "); check that the driver matches the kernel module "
                                              "(nvidia-smi)" +
                                              kNoIdHint);
        return;
    }
  }

  template <class Fn>
  bool Entry(GetProcV2 v2, GetProcV1 v1, const char* name, Fn* fn, bool required) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    const CUresult r = v2 != nullptr ? v2(name, &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found)
                                     : v1(name, &p, 11030, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && p != nullptr) {
      *fn = reinterpret_cast<Fn>(p);
      return true;
    }
    if (!required) return false;
    if (r == CUDA_ERROR_STUB_LIBRARY) {
      StubFailure();
    } else {
      SetStatus(RuntimeStatus::kFailed, "CUDA: " + info.library + " has no entry point " + name +
                                            " (cuGetProcAddress: " + ErrorName(r) +
                                            "); the driver is too old or this is not the driver" +
                                            kNoIdHint);
    }
    return false;
  }

  void Load() {
    const std::string chosen =
        LibraryOverride(has_override, override_path, "DLBRIDGE_CUDA_LIBRARY");
    std::string errors;
    void* handle = OpenFirst({chosen.empty() ? kDefaultLibrary : chosen}, &info.library, &errors);
    if (handle == nullptr) {
      info.library = chosen.empty() ? kDefaultLibrary : chosen;
      SetStatus(RuntimeStatus::kNotInstalled, "CUDA: the driver library " + info.library +
                                                  " is not installed (" + errors +
                                                  "); install the NVIDIA driver" + kNoIdHint);
      return;
    }
    auto v2 = reinterpret_cast<GetProcV2>(Symbol(handle, "cuGetProcAddress_v2"));
    auto v1 = reinterpret_cast<GetProcV1>(Symbol(handle, "cuGetProcAddress"));
    if (v2 == nullptr && v1 == nullptr) {
      SetStatus(RuntimeStatus::kFailed, "CUDA: " + info.library +
                                            " has no cuGetProcAddress: it is not a CUDA >= 11.3 "
                                            "driver; update the NVIDIA driver" +
                                            kNoIdHint);
      return;
    }
    Entry(v2, v1, "cuGetErrorName", &get_error_name, false);
    decltype(&::cuInit) init = nullptr;
    decltype(&::cuDriverGetVersion) driver_version = nullptr;
    decltype(&::cuDeviceGetCount) device_count = nullptr;
    if (!Entry(v2, v1, "cuInit", &init, true) ||
        !Entry(v2, v1, "cuDriverGetVersion", &driver_version, true) ||
        !Entry(v2, v1, "cuDeviceGetCount", &device_count, true) ||
        !Entry(v2, v1, "cuPointerGetAttributes", &pointer_get_attributes, true)) {
      return;
    }
    // Base names: cuGetProcAddress returns the current version (cuCtxPushCurrent_v2, ...).
    // Optional: without them only ordering fails (see STR-6).
    const bool streams = Entry(v2, v1, "cuDeviceGet", &device_get, false) &&
                         Entry(v2, v1, "cuDevicePrimaryCtxRetain", &primary_ctx_retain, false) &&
                         Entry(v2, v1, "cuDevicePrimaryCtxRelease", &primary_ctx_release, false) &&
                         Entry(v2, v1, "cuCtxPushCurrent", &ctx_push, false) &&
                         Entry(v2, v1, "cuCtxPopCurrent", &ctx_pop, false) &&
                         Entry(v2, v1, "cuEventCreate", &event_create, false) &&
                         Entry(v2, v1, "cuEventRecord", &event_record, false) &&
                         Entry(v2, v1, "cuStreamWaitEvent", &stream_wait_event, false) &&
                         Entry(v2, v1, "cuEventDestroy", &event_destroy, false);
    if (!streams) {
      missing_stream_entry =
          "a driver entry point for stream ordering (cuDeviceGet, "
          "cuDevicePrimaryCtxRetain/Release, cuCtxPush/PopCurrent, "
          "cuEventCreate/Record/Destroy, cuStreamWaitEvent)";
    }
    copies = Entry(v2, v1, "cuMemAlloc", &mem_alloc, false) &&
             Entry(v2, v1, "cuMemFree", &mem_free, false) &&
             Entry(v2, v1, "cuMemcpyHtoDAsync", &memcpy_htod, false) &&
             Entry(v2, v1, "cuMemcpyDtoHAsync", &memcpy_dtoh, false) &&
             Entry(v2, v1, "cuMemcpyDtoDAsync", &memcpy_dtod, false) &&
             Entry(v2, v1, "cuStreamSynchronize", &stream_synchronize, false);
    CUresult r = init(0);
    if (r != CUDA_SUCCESS) return InitFailure("cuInit", r);
    if (driver_version(&info.version) != CUDA_SUCCESS) info.version = 0;
    int count = 0;
    r = device_count(&count);
    if (r != CUDA_SUCCESS) return InitFailure("cuDeviceGetCount", r);
    if (count == 0) return InitFailure("cuDeviceGetCount", CUDA_ERROR_NO_DEVICE);
    info.status = RuntimeStatus::kReady;
  }
};

class CudaBackendImpl final : public LazyBackend<CudaState> {
 public:
  RuntimeStatus Query(const void* pointer, void*, PointerInfo* out, std::string* error) override {
    CudaState& s = Loaded();
    // cuPointerGetAttributes succeeds for pointers CUDA does not know, leaving type 0. The
    // ordinal is used instead of the context: pool and VMM allocations have a NULL context.
    unsigned int type = 0;
    int ordinal = -1;
    unsigned long long managed = 0;  // a bool is written: read it zero-extended
    CUpointer_attribute attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                        CU_POINTER_ATTRIBUTE_IS_MANAGED};
    void* data[] = {&type, &ordinal, &managed};
    const CUresult r =
        s.pointer_get_attributes(3, attributes, data, reinterpret_cast<CUdeviceptr>(pointer));
    if (r != CUDA_SUCCESS) {
      const bool uninit = r == CUDA_ERROR_NOT_INITIALIZED || r == CUDA_ERROR_DEINITIALIZED;
      const bool context = r == CUDA_ERROR_INVALID_CONTEXT;
      *error = "CUDA: cuPointerGetAttributes failed (" + s.ErrorName(r) + ")" +
               (uninit    ? "; the driver is not initialised (forked child or process exit)"
                : context ? "; make a CUDA context current on this thread (cudaSetDevice)"
                          : "") +
               "; give the device id and set verify_device to kOff to skip the query";
      return uninit || context ? RuntimeStatus::kNotInitialized : RuntimeStatus::kFailed;
    }
    PointerInfo info;
    if (managed != 0) {
      info.kind = PointerKind::kManaged;  // reported as DEVICE with IS_MANAGED set
    } else if (type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY) {
      info.kind = PointerKind::kDevice;
    } else if (type == CU_MEMORYTYPE_HOST) {
      info.kind = PointerKind::kPinnedHost;
    } else if (type == CU_MEMORYTYPE_UNIFIED) {
      info.kind = PointerKind::kManaged;
    } else {
      info.kind = PointerKind::kUnknown;
    }
    info.device_ordinal = info.kind == PointerKind::kUnknown ? -1 : ordinal;
    *out = info;
    return RuntimeStatus::kReady;
  }

  // STR-3: event on the producer, wait on the consumer, in device_id's primary context (the
  // one CUDA's runtime API, PyTorch and CuPy use, so 1 and 2 name their default streams).
  // The event comes from the device's pool and goes back to it once the wait is queued
  // (see STR-10); every step taken is undone on the way out, success or failure.
  bool OrderStreams(int32_t device_id, int64_t producer, int64_t consumer,
                    std::string* error) override {
    CudaState& s = Loaded();
    if (!s.missing_stream_entry.empty()) {
      *error = "CUDA: " + s.info.library + " lacks " + s.missing_stream_entry +
               "; update the NVIDIA driver";
      return false;
    }
    return InContext(s, device_id, error, [&](CUdevice) {
      CUevent event = static_cast<CUevent>(s.events.Take(device_id));
      const bool pooled = event != nullptr;
      CUresult r = CUDA_SUCCESS;
      if (!pooled && !Fresh(s, &event, error)) return false;
      r = s.event_record(event, Stream(producer));
      if (r != CUDA_SUCCESS && pooled) {
        // A pooled event the driver no longer knows (its context was reset): replace it once.
        (void)s.event_destroy(event);
        if (!Fresh(s, &event, error)) return false;
        r = s.event_record(event, Stream(producer));
      }
      if (r != CUDA_SUCCESS) return Drop(s, event, Failed(s, error, "cuEventRecord", r));
      r = s.stream_wait_event(Stream(consumer), event, 0);
      if (r != CUDA_SUCCESS) return Drop(s, event, Failed(s, error, "cuStreamWaitEvent", r));
      // The wait keeps the record it follows: the event may be recorded again at once.
      if (s.events.Give(device_id, event)) return true;
      r = s.event_destroy(event);
      return r == CUDA_SUCCESS || Failed(s, error, "cuEventDestroy", r);
    });
  }

  // cuMemAlloc in the primary context, which the allocation keeps retained until Free
  // (see CPY-3).
  bool Allocate(const CopyPlace& place, size_t bytes, void** pointer, std::string* error) override {
    CudaState& s = Loaded();
    *pointer = nullptr;
    if (!CanCopy(s, error)) return false;
    CUdevice held = 0;
    const bool ok = InContext(s, place.device_id, error, [&](CUdevice dev) {
      CUdeviceptr p = 0;
      const CUresult r = s.mem_alloc(&p, bytes);
      if (r != CUDA_SUCCESS) return Failed(s, error, "cuMemAlloc", r);
      *pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
      held = dev;
      return true;
    });
    if (!ok) {
      if (*pointer != nullptr) {  // allocated, then a context call failed
        std::string ignored;
        (void)InContext(s, place.device_id, &ignored, [&](CUdevice) {
          return s.mem_free(reinterpret_cast<CUdeviceptr>(*pointer)) == CUDA_SUCCESS;
        });
        *pointer = nullptr;
      }
      return false;
    }
    CUcontext kept = nullptr;
    const CUresult r = s.primary_ctx_retain(&kept, held);  // the allocation's reference
    if (r != CUDA_SUCCESS) {
      std::string ignored;
      (void)InContext(s, place.device_id, &ignored, [&](CUdevice) {
        return s.mem_free(reinterpret_cast<CUdeviceptr>(*pointer)) == CUDA_SUCCESS;
      });
      *pointer = nullptr;
      return Failed(s, error, "cuDevicePrimaryCtxRetain", r);
    }
    return true;
  }

  bool Free(const CopyPlace& place, void* pointer, std::string* error) override {
    CudaState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    CUdevice held = 0;
    bool freed = false;
    bool ok = InContext(s, place.device_id, error, [&](CUdevice dev) {
      held = dev;
      const CUresult r = s.mem_free(reinterpret_cast<CUdeviceptr>(pointer));
      freed = r == CUDA_SUCCESS;
      return freed || Failed(s, error, "cuMemFree", r);
    });
    if (freed) {  // even when a context call after cuMemFree failed: the memory is gone
      const CUresult r = s.primary_ctx_release(held);  // Allocate's reference
      if (r != CUDA_SUCCESS) ok = Failed(s, error, "cuDevicePrimaryCtxRelease", r);
    }
    return ok;
  }

  bool Copy(const CopyPlace& place, CopyDirection direction, void* to, const void* from,
            size_t bytes, int64_t stream, bool wait, std::string* error) override {
    CudaState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    return InContext(s, place.device_id, error, [&](CUdevice) {
      const CUstream on = Stream(stream);
      const auto dst = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(to));
      const auto src = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(from));
      if (bytes > 0) {
        CUresult r = CUDA_SUCCESS;
        const char* call = "";
        switch (direction) {
          case CopyDirection::kHostToDevice:
            call = "cuMemcpyHtoDAsync";
            r = s.memcpy_htod(dst, from, bytes, on);
            break;
          case CopyDirection::kDeviceToHost:
            call = "cuMemcpyDtoHAsync";
            r = s.memcpy_dtoh(to, src, bytes, on);
            break;
          case CopyDirection::kDeviceToDevice:
            call = "cuMemcpyDtoDAsync";
            r = s.memcpy_dtod(dst, src, bytes, on);
            break;
        }
        if (r != CUDA_SUCCESS) return Failed(s, error, call, r);
      }
      if (!wait) return true;
      const CUresult r = s.stream_synchronize(on);
      return r == CUDA_SUCCESS || Failed(s, error, "cuStreamSynchronize", r);
    });
  }

  void DrainEventPool() override {
    CudaState* s = Peek();  // never loads the driver only to find an empty pool
    if (s == nullptr || s->event_destroy == nullptr) return;
    for (const auto& e : s->events.TakeAll()) {
      (void)s->event_destroy(static_cast<CUevent>(e.second));
    }
  }

 private:
  static CUstream Stream(int64_t value) {  // the protocol's values are the driver's handles
    return reinterpret_cast<CUstream>(static_cast<intptr_t>(value));
  }
  // Records the first failure: "<call> failed: <error name>"; returns false.
  static bool Failed(const CudaState& s, std::string* error, const char* call, CUresult r) {
    if (error->empty()) *error = std::string(call) + " failed: " + s.ErrorName(r);
    return false;
  }
  static bool Fresh(CudaState& s, CUevent* event, std::string* error) {
    const CUresult r = s.event_create(event, CU_EVENT_DISABLE_TIMING);
    return r == CUDA_SUCCESS || Failed(s, error, "cuEventCreate", r);
  }
  // Destroys an event a failed step leaves behind; returns false (the step failed).
  static bool Drop(CudaState& s, CUevent event, bool) {
    (void)s.event_destroy(event);
    return false;
  }
  bool CanCopy(const CudaState& s, std::string* error) const {
    if (s.copies && s.missing_stream_entry.empty()) return true;
    *error = "CUDA: " + s.info.library +
             " lacks a driver entry point for copies (cuMemAlloc, cuMemFree, "
             "cuMemcpyHtoDAsync/DtoHAsync/DtoDAsync, cuStreamSynchronize, or the context "
             "calls); update the NVIDIA driver";
    return false;
  }
  // Runs `body(device)` with device_id's primary context current: cuDeviceGet,
  // cuDevicePrimaryCtxRetain, cuCtxPushCurrent, body, cuCtxPopCurrent,
  // cuDevicePrimaryCtxRelease; every step taken is undone whatever fails.
  template <class Body>
  static bool InContext(CudaState& s, int32_t device_id, std::string* error, Body body) {
    CUdevice dev = 0;
    CUresult r = s.device_get(&dev, device_id);
    if (r != CUDA_SUCCESS) return Failed(s, error, "cuDeviceGet", r);
    CUcontext ctx = nullptr;
    r = s.primary_ctx_retain(&ctx, dev);
    if (r != CUDA_SUCCESS) return Failed(s, error, "cuDevicePrimaryCtxRetain", r);
    bool ok = false;
    r = s.ctx_push(ctx);
    if (r != CUDA_SUCCESS) {
      Failed(s, error, "cuCtxPushCurrent", r);
    } else {
      ok = body(dev);
      CUcontext popped = nullptr;
      r = s.ctx_pop(&popped);
      if (r != CUDA_SUCCESS) ok = Failed(s, error, "cuCtxPopCurrent", r);
    }
    r = s.primary_ctx_release(dev);
    if (r != CUDA_SUCCESS) ok = Failed(s, error, "cuDevicePrimaryCtxRelease", r);
    return ok;
  }
};

// The pooled events are destroyed when libdlbridge is unloaded (see STR-10; the driver API
// answers calls after its own teardown with an error, never a crash).
struct UnloadCuda {
  Backend* backend = nullptr;
  ~UnloadCuda() {
    if (backend != nullptr) backend->DrainEventPool();
  }
} g_unload;

#endif

}  // namespace

Backend* MakeCudaBackend() {
#if DLBRIDGE_WITH_CUDA
  g_unload.backend = new CudaBackendImpl();
  return g_unload.backend;
#else
  return new DisabledBackend(kCudaDriverLibrary,
                             "CUDA: this build of dlbridge has the CUDA backend switched "
                             "off (DLBRIDGE_WITH_CUDA=OFF); rebuild with the CUDA toolkit's "
                             "headers, or give the device id");
#endif
}

}  // namespace detail
}  // namespace dlbridge
