// The backend interface: one implementation per GPU runtime (src/runtimes/runtime_cuda.cpp,
// src/runtimes/runtime_hip.cpp, src/runtimes/runtime_level_zero.cpp), and what they share (defined
// in src/runtimes/runtime_backend.cpp): the registry, the lazy state and the library loading. Only
// src/runtimes/runtime.cpp asks the backends anything.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "dlbridge/device_verification.h"
#include "dlbridge/runtime_info.h"
#include "runtimes/dynamic_library.h"  // OpenLibrary, and the runtimes' library names on this platform

namespace dlbridge {
namespace detail {

/// Which way a runtime copy goes.
enum class CopyDirection : int { kHostToDevice, kDeviceToHost, kDeviceToDevice };

/// Where a runtime allocates and copies: the device ordinal (CUDA, HIP), or the Level Zero
/// context and device.
struct CopyPlace {
  int32_t device_id = 0;
  void* context = nullptr;
  void* device = nullptr;
};

/// Child-side fork count (pthread_atfork, src/runtimes/runtime_backend.cpp): a pool made under
/// another value belongs to the parent, whose driver handles the child must not use.
uint64_t ForkGeneration() noexcept;

/// The events OrderStreams reuses (STR-10): a few per device, handed out to one caller at a
/// time. A wait keeps the effect of the record it follows, so an event goes back to the pool
/// as soon as the consumer's wait is queued. Thread safe. After a fork the child sees an
/// empty pool: the parent's events are forgotten, never used or destroyed there.
class EventPool {
 public:
  static constexpr size_t kPerDevice = 4;  ///< concurrent exchanges beyond it create events

  /// A pooled event of `device`, or null when none is free (the caller creates one).
  void* Take(int32_t device) {
    std::lock_guard<std::mutex> lock(mutex_);
    Forget();
    for (size_t i = events_.size(); i-- > 0;) {
      if (events_[i].first == device) {
        void* event = events_[i].second;
        events_.erase(events_.begin() + static_cast<std::ptrdiff_t>(i));
        return event;
      }
    }
    return nullptr;
  }
  /// Keeps `event` of `device` for the next Take; false when the device's share is full (the
  /// caller destroys it).
  bool Give(int32_t device, void* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    Forget();
    size_t held = 0;
    for (const auto& e : events_) held += e.first == device ? 1 : 0;
    if (held >= kPerDevice) return false;
    events_.emplace_back(device, event);
    return true;
  }
  /// Empties the pool, returning what it held (the caller destroys it).
  std::vector<std::pair<int32_t, void*>> TakeAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    Forget();
    std::vector<std::pair<int32_t, void*>> all;
    all.swap(events_);
    return all;
  }

 private:
  void Forget() {  // caller holds the lock
    const uint64_t now = ForkGeneration();
    if (now != generation_) {
      events_.clear();  // the parent's: not ours to destroy
      generation_ = now;
    }
  }
  std::mutex mutex_;
  uint64_t generation_ = ForkGeneration();
  std::vector<std::pair<int32_t, void*>> events_;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// Loads the runtime on the first call (std::call_once); the reference stays valid until
  /// the next SetRuntimeLibrary (tests only).
  virtual const RuntimeInfo& Info() = 0;
  /// Only after Info().status == kReady. Returns kReady and fills `info`, or another status
  /// with `error` saying what failed and what to do.
  virtual RuntimeStatus Query(const void* pointer, void* level_zero_context, PointerInfo* info,
                              std::string* error) = 0;
  /// Level Zero: the root-device index of `device` (see GPU-10); -1 with `error` if unknown.
  virtual int32_t DeviceIndex(void* device, std::string* error) {
    (void)device;
    *error = "not a Level Zero runtime";
    return -1;
  }
  /// Only after Info().status == kReady: makes `consumer` wait for the work queued so far on
  /// `producer` (streams of device `device_id`, valid and distinct Python DLPack stream
  /// values; src/runtimes/streams.cpp decides when ordering is needed). Returns true, or false with
  /// `error` naming the driver call that failed and its error, after destroying what it made
  /// and restoring the context / device it changed.
  virtual bool OrderStreams(int32_t device_id, int64_t producer, int64_t consumer,
                            std::string* error) {
    (void)device_id;
    (void)producer;
    (void)consumer;
    *error = "this runtime has no streams dlbridge can order";
    return false;
  }
  /// Only after Info().status == kReady: `bytes` (> 0) of new device memory on `place`,
  /// 256-byte aligned, into `*pointer`. Returns true, or false with `error` naming the call
  /// that failed and its error, having freed what it made and restored what it changed. CUDA
  /// keeps the device's primary context retained until Free.
  virtual bool Allocate(const CopyPlace& place, size_t bytes, void** pointer, std::string* error) {
    (void)place;
    (void)bytes;
    (void)pointer;
    *error = "this runtime cannot allocate memory";
    return false;
  }
  /// Frees what Allocate gave, once, from any thread; false with `error` when the runtime
  /// refuses (nothing else can be done about it then).
  virtual bool Free(const CopyPlace& place, void* pointer, std::string* error) {
    (void)place;
    (void)pointer;
    *error = "this runtime cannot free memory";
    return false;
  }
  /// Only after Info().status == kReady: queues a copy of `bytes` bytes from `from` to `to` on
  /// `stream` (a valid Python DLPack stream value of the runtime; Level Zero: not read) of
  /// `place`, and waits for the stream when `wait` is true; `bytes` 0 queues nothing but still
  /// waits when asked. Returns true, or false with `error` as Allocate.
  virtual bool Copy(const CopyPlace& place, CopyDirection direction, void* to, const void* from,
                    size_t bytes, int64_t stream, bool wait, std::string* error) {
    (void)place;
    (void)direction;
    (void)to;
    (void)from;
    (void)bytes;
    (void)stream;
    (void)wait;
    *error = "this runtime cannot copy memory";
    return false;
  }
  /// Drops the events pooled for OrderStreams through the runtime (tests, library unload).
  virtual void DrainEventPool() {}
  /// Tests (testing::SetRuntimeLibrary): forgets what was loaded; the next use loads
  /// `library`, or the default names when null. A backend that loads nothing ignores it.
  virtual void Reset(const char* library) { (void)library; }
};

/// A backend switched off at configure time: every answer says so, and what to do instead.
class DisabledBackend : public Backend {
 public:
  DisabledBackend(const char* library, const char* message)
      : info_{RuntimeStatus::kNotBuilt, library, 0, message} {}
  const RuntimeInfo& Info() override { return info_; }
  RuntimeStatus Query(const void*, void*, PointerInfo*, std::string* error) override {
    *error = info_.message;
    return RuntimeStatus::kNotBuilt;
  }

 private:
  RuntimeInfo info_;
};

/// Each backend file's factory (src/runtimes/runtime_<x>.cpp): its backend, or a DisabledBackend
/// saying how to get one when the backend is configured off. Called once, by BackendOf.
Backend* MakeCudaBackend();
Backend* MakeHipBackend();
Backend* MakeLevelZeroBackend();

/// How many GpuRuntime values there are, and the index of one (out-of-range values: 0, CUDA).
constexpr int kGpuRuntimeCount = 3;
inline int RuntimeIndex(GpuRuntime runtime) noexcept {
  const int i = static_cast<int>(runtime);
  return i >= 0 && i < kGpuRuntimeCount ? i : 0;
}

/// The backend of `runtime` (RuntimeIndex), made on first use and never destroyed, so that it
/// stays usable while the process exits.
Backend& BackendOf(GpuRuntime runtime);

/// HIP's memory type as of the runtime's major version: ROCm 6 renumbered hipMemoryType
/// (src/runtimes/runtime_hip.cpp; spec GPU-6).
PointerKind HipPointerKind(int major, int type, bool managed);

/// The library to load: the test override, else $`env_name` when set and non-empty, else
/// empty (the backend's default names).
std::string LibraryOverride(bool has_override, const std::string& override_path,
                            const char* env_name);

/// OpenLibrary (src/runtimes/dynamic_library.h) of the first name that loads; fills `loaded` with
/// its name, or `errors` with every name's load error. Returns null when none loads.
void* OpenFirst(const std::vector<std::string>& names, std::string* loaded, std::string* errors);
void* Symbol(void* handle, const char* name);

/// What every backend's lazily loaded state holds; a backend's state derives from it and adds
/// its entry points and `void Load()`, which fills `info`.
struct BackendState {
  std::once_flag once;
  bool has_override = false;  ///< testing::SetRuntimeLibrary named a library
  std::string override_path;
  RuntimeInfo info;
  /// Records why the runtime cannot answer, and what to do about it.
  void SetStatus(RuntimeStatus status, std::string message) {
    info.status = status;
    info.message = std::move(message);
  }
};

/// One-time lazy state of a backend, replaceable by tests. State derives from BackendState and
/// has `void Load()`. Old states are kept (a thread may still hold a reference); dlopen'ed
/// handles are never closed.
template <class State>
class LazyState {
 public:
  /// The current state without loading it (null before the first use).
  State* Peek() { return current_.load(std::memory_order_acquire); }
  State& Get() {
    State* state = current_.load(std::memory_order_acquire);
    if (state == nullptr) state = Install(false, nullptr);
    std::call_once(state->once, [state] { state->Load(); });
    return *state;
  }
  void Reset(const char* library) { Install(true, library); }

 private:
  State* Install(bool replace, const char* library) {
    std::lock_guard<std::mutex> lock(mutex_);
    State* state = current_.load(std::memory_order_relaxed);
    if (state != nullptr && !replace) return state;
    auto fresh = std::make_unique<State>();
    fresh->has_override = library != nullptr;
    if (library != nullptr) fresh->override_path = library;
    all_.push_back(std::move(fresh));
    current_.store(all_.back().get(), std::memory_order_release);
    return all_.back().get();
  }
  std::mutex mutex_;
  std::atomic<State*> current_{nullptr};
  std::vector<std::unique_ptr<State>> all_;
};

/// A backend whose runtime is loaded on first use into a State (see LazyState); the backend
/// file adds Query (and DeviceIndex), reading the loaded state through Loaded().
template <class State>
class LazyBackend : public Backend {
 public:
  const RuntimeInfo& Info() final { return lazy_.Get().info; }
  void Reset(const char* library) final { lazy_.Reset(library); }

 protected:
  State& Loaded() { return lazy_.Get(); }
  /// The state if one was made, loaded or not (its entry points are null until loaded).
  State* Peek() { return lazy_.Peek(); }

 private:
  LazyState<State> lazy_;
};

}  // namespace detail
}  // namespace dlbridge
