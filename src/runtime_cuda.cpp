// The CUDA backend: the driver API, loaded on first use from libcuda.so.1. Entry points come
// from cuGetProcAddress; types from the toolkit's cuda.h at build time (DLBRIDGE_WITH_CUDA).
#include "runtime_backend_internal.h"

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
constexpr const char* kNoIdHint =
    "; without a driver, give the device id (Tensor::device or ExportOptions::device_id)";

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
  // Every step taken is undone in reverse on the way out, success or failure.
  bool OrderStreams(int32_t device_id, int64_t producer, int64_t consumer,
                    std::string* error) override {
    CudaState& s = Loaded();
    if (!s.missing_stream_entry.empty()) {
      *error = "CUDA: " + s.info.library + " lacks " + s.missing_stream_entry +
               "; update the NVIDIA driver";
      return false;
    }
    auto failed = [&](const char* call, CUresult r) {
      if (error->empty()) *error = std::string(call) + " failed: " + s.ErrorName(r);
    };
    CUdevice dev = 0;
    CUresult r = s.device_get(&dev, device_id);
    if (r != CUDA_SUCCESS) {
      failed("cuDeviceGet", r);
      return false;
    }
    CUcontext ctx = nullptr;
    r = s.primary_ctx_retain(&ctx, dev);
    if (r != CUDA_SUCCESS) {
      failed("cuDevicePrimaryCtxRetain", r);
      return false;
    }
    bool ok = false;
    r = s.ctx_push(ctx);
    if (r != CUDA_SUCCESS) {
      failed("cuCtxPushCurrent", r);
    } else {
      CUevent event = nullptr;
      r = s.event_create(&event, CU_EVENT_DISABLE_TIMING);
      if (r != CUDA_SUCCESS) {
        failed("cuEventCreate", r);
      } else {
        r = s.event_record(event, reinterpret_cast<CUstream>(static_cast<intptr_t>(producer)));
        if (r != CUDA_SUCCESS) {
          failed("cuEventRecord", r);
        } else {
          r = s.stream_wait_event(reinterpret_cast<CUstream>(static_cast<intptr_t>(consumer)),
                                  event, 0);
          if (r != CUDA_SUCCESS) {
            failed("cuStreamWaitEvent", r);
          } else {
            ok = true;
          }
        }
        // The wait holds what it needs: destroying the event now is allowed and frees it.
        r = s.event_destroy(event);
        if (r != CUDA_SUCCESS) {
          failed("cuEventDestroy", r);
          ok = false;
        }
      }
      CUcontext popped = nullptr;
      r = s.ctx_pop(&popped);
      if (r != CUDA_SUCCESS) {
        failed("cuCtxPopCurrent", r);
        ok = false;
      }
    }
    r = s.primary_ctx_release(dev);
    if (r != CUDA_SUCCESS) {
      failed("cuDevicePrimaryCtxRelease", r);
      ok = false;
    }
    return ok;
  }
};

#endif

}  // namespace

Backend* MakeCudaBackend() {
#if DLBRIDGE_WITH_CUDA
  return new CudaBackendImpl();
#else
  return new DisabledBackend(kCudaDriverLibrary,
                             "CUDA: this build of dlbridge has the CUDA backend switched "
                             "off (DLBRIDGE_WITH_CUDA=OFF); rebuild with the CUDA toolkit's "
                             "headers, or give the device id (Tensor::device or "
                             "ExportOptions::device_id)");
#endif
}

}  // namespace detail
}  // namespace dlbridge
