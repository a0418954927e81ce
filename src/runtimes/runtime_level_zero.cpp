// The Level Zero backend: the oneAPI loader libze_loader.so.1, loaded on first use. Types
// come from level_zero/ze_api.h at build time (DLBRIDGE_WITH_LEVEL_ZERO). Pointers are only
// meaningful with the context the caller supplies.
#include "runtimes/runtime_backend_internal.h"

#if DLBRIDGE_WITH_LEVEL_ZERO
#include <level_zero/ze_api.h>

#include <cstdio>
#endif

#include <string>

namespace dlbridge {
namespace detail {
namespace {

#if DLBRIDGE_WITH_LEVEL_ZERO

constexpr const char* kDefaultLibrary = kLevelZeroLoaderLibrary;
// The way around a missing driver, in words of no one API (see runtime_cuda.cpp).
constexpr const char* kNoIdHint = "; without a usable Level Zero driver, give the device id";

std::string ResultText(ze_result_t r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "ze_result_t 0x%x", static_cast<unsigned>(r));
  return buf;
}

struct LevelZeroState : BackendState {
  decltype(&::zeDriverGet) driver_get = nullptr;
  decltype(&::zeDeviceGet) device_get = nullptr;
  decltype(&::zeDeviceGetSubDevices) sub_devices = nullptr;
  decltype(&::zeMemGetAllocProperties) alloc_properties = nullptr;
  // Copies (CopyTo); optional at load, so that pointer queries work without.
  decltype(&::zeMemAllocDevice) mem_alloc_device = nullptr;
  decltype(&::zeMemFree) mem_free = nullptr;
  decltype(&::zeCommandListCreateImmediate) list_create_immediate = nullptr;
  decltype(&::zeCommandListAppendMemoryCopy) append_memory_copy = nullptr;
  decltype(&::zeCommandListDestroy) list_destroy = nullptr;
  // GPU-10: kDLOneAPI ids index the root devices in driver order, then zeDeviceGet order;
  // filled at load.
  std::vector<ze_device_handle_t> roots;

  void Load() {
    const std::string chosen =
        LibraryOverride(has_override, override_path, "DLBRIDGE_LEVEL_ZERO_LIBRARY");
    std::string errors;
    void* handle = OpenFirst({chosen.empty() ? kDefaultLibrary : chosen}, &info.library, &errors);
    if (handle == nullptr) {
      info.library = chosen.empty() ? kDefaultLibrary : chosen;
      SetStatus(RuntimeStatus::kNotInstalled,
                "Level Zero: the loader " + info.library + " is not installed (" + errors +
                    "); install the oneAPI Level Zero loader (e.g. Debian's libze1)" + kNoIdHint);
      return;
    }
    auto init = reinterpret_cast<decltype(&::zeInit)>(Symbol(handle, "zeInit"));
    auto api_version = reinterpret_cast<decltype(&::zeDriverGetApiVersion)>(
        Symbol(handle, "zeDriverGetApiVersion"));
    driver_get = reinterpret_cast<decltype(&::zeDriverGet)>(Symbol(handle, "zeDriverGet"));
    device_get = reinterpret_cast<decltype(&::zeDeviceGet)>(Symbol(handle, "zeDeviceGet"));
    sub_devices = reinterpret_cast<decltype(&::zeDeviceGetSubDevices)>(
        Symbol(handle, "zeDeviceGetSubDevices"));
    alloc_properties = reinterpret_cast<decltype(&::zeMemGetAllocProperties)>(
        Symbol(handle, "zeMemGetAllocProperties"));
    mem_alloc_device =
        reinterpret_cast<decltype(&::zeMemAllocDevice)>(Symbol(handle, "zeMemAllocDevice"));
    mem_free = reinterpret_cast<decltype(&::zeMemFree)>(Symbol(handle, "zeMemFree"));
    list_create_immediate = reinterpret_cast<decltype(&::zeCommandListCreateImmediate)>(
        Symbol(handle, "zeCommandListCreateImmediate"));
    append_memory_copy = reinterpret_cast<decltype(&::zeCommandListAppendMemoryCopy)>(
        Symbol(handle, "zeCommandListAppendMemoryCopy"));
    list_destroy =
        reinterpret_cast<decltype(&::zeCommandListDestroy)>(Symbol(handle, "zeCommandListDestroy"));
    if (init == nullptr || driver_get == nullptr || device_get == nullptr ||
        sub_devices == nullptr || alloc_properties == nullptr) {
      SetStatus(RuntimeStatus::kFailed,
                "Level Zero: " + info.library +
                    " lacks zeInit, zeDriverGet, zeDeviceGet or "
                    "zeMemGetAllocProperties: it is not a Level Zero loader" +
                    kNoIdHint);
      return;
    }
    const ze_result_t r = init(0);
    if (r == ZE_RESULT_ERROR_UNINITIALIZED) {
      // GPU-7: the loader answers this when it finds no driver: kNoDevice.
      SetStatus(RuntimeStatus::kNoDevice,
                "Level Zero: the loader " + info.library +
                    " found no driver (zeInit: ZE_RESULT_ERROR_UNINITIALIZED); install a GPU "
                    "driver with Level Zero support (e.g. intel-level-zero-gpu)" +
                    kNoIdHint);
      return;
    }
    if (r != ZE_RESULT_SUCCESS) {
      SetStatus(RuntimeStatus::kNotInitialized, "Level Zero: zeInit failed (" + ResultText(r) +
                                                    "); check the driver installation "
                                                    "and ZE_ENABLE_* / ZE_AFFINITY_MASK settings" +
                                                    kNoIdHint);
      return;
    }
    uint32_t driver_count = 0;
    if (driver_get(&driver_count, nullptr) != ZE_RESULT_SUCCESS || driver_count == 0) {
      SetStatus(RuntimeStatus::kNoDevice,
                std::string("Level Zero: zeDriverGet reports no driver; install a GPU "
                            "driver with Level Zero support") +
                    kNoIdHint);
      return;
    }
    std::vector<ze_driver_handle_t> drivers(driver_count);
    if (driver_get(&driver_count, drivers.data()) != ZE_RESULT_SUCCESS) driver_count = 0;
    drivers.resize(driver_count);
    for (ze_driver_handle_t driver : drivers) {
      if (info.version == 0 && api_version != nullptr) {
        ze_api_version_t v{};
        if (api_version(driver, &v) == ZE_RESULT_SUCCESS) info.version = static_cast<int>(v);
      }
      uint32_t n = 0;
      if (device_get(driver, &n, nullptr) != ZE_RESULT_SUCCESS || n == 0) continue;
      std::vector<ze_device_handle_t> devices(n);
      if (device_get(driver, &n, devices.data()) != ZE_RESULT_SUCCESS) continue;
      roots.insert(roots.end(), devices.begin(), devices.begin() + n);
    }
    if (roots.empty()) {
      SetStatus(RuntimeStatus::kNoDevice,
                std::string("Level Zero: the drivers report no device; check "
                            "ZE_AFFINITY_MASK and the GPU driver") +
                    kNoIdHint);
      return;
    }
    info.status = RuntimeStatus::kReady;
  }

  // The index of `device`'s root device in `roots`, searching one level of sub-devices
  // (the usual tile hierarchy; GPU-10: a tile maps to its root); -1 if unknown.
  int32_t RootIndex(ze_device_handle_t device) const {
    for (size_t i = 0; i < roots.size(); ++i) {
      if (roots[i] == device) return static_cast<int32_t>(i);
    }
    for (size_t i = 0; i < roots.size(); ++i) {
      uint32_t n = 0;
      if (sub_devices(roots[i], &n, nullptr) != ZE_RESULT_SUCCESS || n == 0) continue;
      std::vector<ze_device_handle_t> subs(n);
      if (sub_devices(roots[i], &n, subs.data()) != ZE_RESULT_SUCCESS) continue;
      for (uint32_t k = 0; k < n; ++k) {
        if (subs[k] == device) return static_cast<int32_t>(i);
      }
    }
    return -1;
  }
};

class LevelZeroBackendImpl final : public LazyBackend<LevelZeroState> {
 public:
  RuntimeStatus Query(const void* pointer, void* context, PointerInfo* out,
                      std::string* error) override {
    LevelZeroState& s = Loaded();
    ze_memory_allocation_properties_t properties{};
    properties.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    properties.pNext = nullptr;
    ze_device_handle_t device = nullptr;
    const ze_result_t r = s.alloc_properties(static_cast<ze_context_handle_t>(context), pointer,
                                             &properties, &device);
    if (r != ZE_RESULT_SUCCESS) {
      *error = "Level Zero: zeMemGetAllocProperties failed (" + ResultText(r) +
               "); check that the context handle is valid";
      return r == ZE_RESULT_ERROR_UNINITIALIZED ? RuntimeStatus::kNotInitialized
                                                : RuntimeStatus::kFailed;
    }
    PointerInfo info;
    switch (properties.type) {
      case ZE_MEMORY_TYPE_HOST: info.kind = PointerKind::kPinnedHost; break;
      case ZE_MEMORY_TYPE_DEVICE: info.kind = PointerKind::kDevice; break;
      case ZE_MEMORY_TYPE_SHARED: info.kind = PointerKind::kManaged; break;
      default: info.kind = PointerKind::kUnknown; break;
    }
    if (info.kind != PointerKind::kUnknown && device != nullptr) {
      info.level_zero_device = device;
      info.device_ordinal = s.RootIndex(device);
    }
    *out = info;
    return RuntimeStatus::kReady;
  }

  int32_t DeviceIndex(void* device, std::string* error) override {
    const int32_t index = Loaded().RootIndex(static_cast<ze_device_handle_t>(device));
    if (index < 0) {
      *error = "Level Zero: the device handle is not a device (or sub-device) of any driver";
    }
    return index;
  }

  // zeMemAllocDevice (256-byte aligned) / zeMemFree in the caller's context (see CPY-3).
  bool Allocate(const CopyPlace& place, size_t bytes, void** pointer, std::string* error) override {
    LevelZeroState& s = Loaded();
    *pointer = nullptr;
    if (!CanCopy(s, error)) return false;
    ze_device_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    const ze_result_t r = s.mem_alloc_device(
        Context(place), &desc, bytes, 256, static_cast<ze_device_handle_t>(place.device), pointer);
    if (r == ZE_RESULT_SUCCESS) return true;
    *pointer = nullptr;
    return Failed(error, "zeMemAllocDevice", r);
  }

  bool Free(const CopyPlace& place, void* pointer, std::string* error) override {
    LevelZeroState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    const ze_result_t r = s.mem_free(Context(place), pointer);
    return r == ZE_RESULT_SUCCESS || Failed(error, "zeMemFree", r);
  }

  // Level Zero has no stream values: a synchronous immediate command list of its own runs
  // the copy, which is complete when the append returns (`stream` and `wait` are not read).
  bool Copy(const CopyPlace& place, CopyDirection, void* to, const void* from, size_t bytes,
            int64_t, bool, std::string* error) override {
    LevelZeroState& s = Loaded();
    if (!CanCopy(s, error)) return false;
    if (bytes == 0) return true;
    ze_command_queue_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
    desc.ordinal = 0;
    desc.index = 0;
    desc.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
    ze_command_list_handle_t list = nullptr;
    ze_result_t r = s.list_create_immediate(
        Context(place), static_cast<ze_device_handle_t>(place.device), &desc, &list);
    if (r != ZE_RESULT_SUCCESS) return Failed(error, "zeCommandListCreateImmediate", r);
    r = s.append_memory_copy(list, to, from, bytes, nullptr, 0, nullptr);
    bool ok = r == ZE_RESULT_SUCCESS || Failed(error, "zeCommandListAppendMemoryCopy", r);
    r = s.list_destroy(list);
    if (r != ZE_RESULT_SUCCESS) ok = Failed(error, "zeCommandListDestroy", r);
    return ok;
  }

 private:
  static ze_context_handle_t Context(const CopyPlace& place) {
    return static_cast<ze_context_handle_t>(place.context);
  }
  static bool Failed(std::string* error, const char* call, ze_result_t r) {
    if (error->empty()) *error = std::string(call) + " failed: " + ResultText(r);
    return false;
  }
  static bool CanCopy(const LevelZeroState& s, std::string* error) {
    if (s.mem_alloc_device != nullptr && s.mem_free != nullptr &&
        s.list_create_immediate != nullptr && s.append_memory_copy != nullptr &&
        s.list_destroy != nullptr) {
      return true;
    }
    *error = "Level Zero: " + s.info.library +
             " lacks zeMemAllocDevice, zeMemFree, zeCommandListCreateImmediate, "
             "zeCommandListAppendMemoryCopy or zeCommandListDestroy; update the loader";
    return false;
  }
};

#endif

}  // namespace

Backend* MakeLevelZeroBackend() {
#if DLBRIDGE_WITH_LEVEL_ZERO
  return new LevelZeroBackendImpl();
#else
  return new DisabledBackend(kLevelZeroLoaderLibrary,
                             "Level Zero: this build of dlbridge has the Level Zero backend "
                             "switched off (DLBRIDGE_WITH_LEVEL_ZERO=OFF); rebuild with the "
                             "Level Zero headers, or give the device id");
#endif
}

}  // namespace detail
}  // namespace dlbridge
