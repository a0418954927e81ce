// Copies through the GPU runtimes (include/dlbridge/device_copy.h; spec/copies.md CPY-*):
// which side runs the copy, staging for strided layouts, and the device allocation the result
// owns. The runtime calls are the backends' (Backend::Allocate/Free/Copy); the host side of a
// staged copy is host_copy.cpp's one copier (CopyHostElements).
#include "dlbridge/device_copy.h"

#include <memory>
#include <new>
#include <string>
#include <utility>

#include "dlbridge/device_map.h"
#include "dlbridge/host_copy.h"
#include "dlbridge/runtime.h"
#include "dlpack_rules.h"
#include "error_internal.h"
#include "host_copy_internal.h"
#include "runtime_backend_internal.h"
#include "runtime_internal.h"

namespace dlbridge {

using detail::Fail;

namespace {

// One side of a copy: host memory the CPU reads at its own address, or a GPU runtime's.
struct Side {
  DLDevice device{};
  bool host = false;
  GpuRuntime runtime = GpuRuntime::kCuda;
  detail::CopyPlace place;
};

std::string DeviceText(DLDevice device) {
  return std::string(DeviceTypeName(device.device_type)) + " device " +
         std::to_string(device.device_id);
}

// Level Zero: the options' handles, else the registered ones; both are needed.
void PlaceLevelZero(const CopyOptions& options, const char* which, Side* side) {
  detail::LevelZeroHandles(options.level_zero_context, options.level_zero_device,
                           &side->place.context, &side->place.device);
  if (side->place.context == nullptr || side->place.device == nullptr) {
    Fail(ErrorCode::kMissingContext,
         std::string("CopyTo: the ") + which +
             " is Level Zero memory, which needs a context and a device "
             "(CopyOptions::level_zero_context/level_zero_device, or SetLevelZeroContext)");
  }
}

// CPY-1: the sources CopyTo reads: what the CPU reads at its own address (host memory,
// pinned and managed memory) and the GPU spaces' device types.
Side SourceSide(DLDevice device, const CopyOptions& options) {
  Side side;
  side.device = device;
  side.place.device_id = device.device_id;
  if (IsHostAccessible(device.device_type)) {
    side.host = true;
    return side;
  }
  const DeviceTypeInfo* row = FindDeviceType(device.device_type);
  if (row == nullptr || !row->has_runtime) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string("CopyTo: cannot copy from ") + DeviceTypeName(device.device_type) +
             " memory; accepted sources: " + DeviceTypeNames([](const DeviceTypeInfo& r) {
               return r.host_accessible || r.has_runtime;
             }));
  }
  side.runtime = row->runtime;
  if (side.runtime == GpuRuntime::kLevelZero) PlaceLevelZero(options, "source", &side);
  return side;
}

// CPY-1: the targets: host memory (kDLCPU) and each runtime's device memory.
Side TargetSide(DLDevice target, const CopyOptions& options) {
  Side side;
  side.device = target;
  side.place.device_id = target.device_id;
  switch (target.device_type) {
    case kDLCPU: side.host = true; break;
    case kDLCUDA: side.runtime = GpuRuntime::kCuda; break;
    case kDLROCM: side.runtime = GpuRuntime::kHip; break;
    case kDLOneAPI: side.runtime = GpuRuntime::kLevelZero; break;
    default:
      Fail(ErrorCode::kUnsupportedDevice,
           std::string("CopyTo: cannot copy to ") + DeviceTypeName(target.device_type) +
               "; accepted targets: kDLCPU (device 0), kDLCUDA, kDLROCM, kDLOneAPI");
  }
  if (target.device_id < 0 || (side.host && target.device_id != 0)) {
    Fail(ErrorCode::kDeviceMismatch, "CopyTo: target " + DeviceText(target) +
                                         " is not a device; kDLCPU is device 0, a GPU's id "
                                         "is its ordinal (>= 0)");
  }
  if (side.runtime == GpuRuntime::kLevelZero && !side.host) {
    PlaceLevelZero(options, "target", &side);
  }
  return side;
}

// CPY-7: the backend of `runtime`, once it can be used (else the runtime's own code and
// message).
detail::Backend& Ready(GpuRuntime runtime) {
  detail::Backend& backend = detail::BackendOf(runtime);
  const RuntimeInfo& info = backend.Info();
  if (info.status != RuntimeStatus::kReady) {
    Fail(detail::CodeFor(info.status), "CopyTo: " + info.message);
  }
  return backend;
}

// CPY-1: a Level Zero target's id is the index (see GPU-10) of the device the copy allocates on,
// the options' or the registered one; another id would label the result with a device its
// memory is not on.
void CheckLevelZeroTarget(const Side& side) {
  (void)Ready(GpuRuntime::kLevelZero);
  std::string error;
  const int32_t index = detail::LevelZeroDeviceIndex(side.place.device, &error);
  if (index == side.device.device_id) return;
  Fail(ErrorCode::kDeviceMismatch,
       "CopyTo: target " + DeviceText(side.device) +
           " is not the Level Zero device the copy allocates on "
           "(CopyOptions::level_zero_device or the registered one), which is " +
           (index >= 0 ? "device " + std::to_string(index) : "no device: " + error) +
           "; pass that device's handle, or its index as the target's id");
}

// CPY-4: a failed runtime call is named, with its error and the device.
[[noreturn]] void FailCall(const std::string& error, DLDevice device) {
  Fail(ErrorCode::kRuntimeUnavailable,
       "CopyTo: " + error + " (" + DeviceText(device) + "); nothing was copied or kept");
}

// The device memory a result owns, freed through its runtime when the last hold drops.
struct DeviceBlock {
  GpuRuntime runtime;
  detail::CopyPlace place;
  void* pointer;
};

void FreeDeviceBlock(void* context) noexcept {
  std::unique_ptr<DeviceBlock> block(static_cast<DeviceBlock*>(context));
  std::string error;  // a runtime that refuses the free leaves nothing else to do
  (void)detail::BackendOf(block->runtime).Free(block->place, block->pointer, &error);
}

// A new C-contiguous tensor of the plan's dtype and shape on `side`, owning its memory
// (CPY-3: freed through the runtime, once; 256-byte aligned, see CPY-6).
Tensor Allocate(const DLTensor& from, const Side& side, int64_t bytes) {
  if (side.host) return AllocateHostTensor(from.dtype, from.ndim, from.shape);
  TensorLayout layout = TensorLayout::FromArrays(from.dtype, from.ndim, from.shape, nullptr);
  detail::Backend& backend = Ready(side.runtime);
  void* pointer = nullptr;
  std::string error;
  // A tensor without elements still gets a (small) allocation, as AllocateHostTensor does.
  const size_t size = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  if (!backend.Allocate(side.place, size, &pointer, &error)) FailCall(error, side.device);
  auto* block = new (std::nothrow) DeviceBlock{side.runtime, side.place, pointer};
  if (block == nullptr) {
    (void)backend.Free(side.place, pointer, &error);
    Fail(ErrorCode::kOutOfMemory, "CopyTo: out of host memory");
  }
  Tensor t;
  t.descriptor.SetRelease(&FreeDeviceBlock, block);  // holds the allocation from here on
  t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer)), bytes,
                   MemorySpaceName(FindDeviceType(side.device.device_type)->space));
  t.layout = std::move(layout);
  t.device = side.device;
  return t;
}

unsigned char* Bytes(const Tensor& t) {
  return reinterpret_cast<unsigned char*>(static_cast<intptr_t>(t.descriptor.GetPointer()));
}

struct FreeAlignedBlock {
  void operator()(void* p) const noexcept { detail::FreeAligned(p); }
};

}  // namespace

Tensor CopyTo(const ExportPlan& plan, DLDevice target, const CopyOptions& options) {
  const DLTensor from = plan.View();
  const Side src = SourceSide(from.device, options);
  const Side dst = TargetSide(target, options);
  if (!dst.host && dst.runtime == GpuRuntime::kLevelZero) CheckLevelZeroTarget(dst);
  if (!src.host && !dst.host &&
      (src.runtime != dst.runtime || src.device.device_id != dst.device.device_id)) {
    Fail(ErrorCode::kUnsupportedDevice,
         "CopyTo: " + DeviceText(from.device) + " to " + DeviceText(target) +
             ": GPU to GPU copies stay on one device; copy through the host "
             "(CopyTo(CopyTo(t, {kDLCPU, 0}), target))");
  }
  const int64_t bytes = detail::PackedSizeOrThrow("CopyTo", from.dtype, from.ndim, from.shape);
  // CPY-2: the GPU side runs the copy, on the caller's stream or the runtime's default one.
  const Side& gpu = src.host ? dst : src;
  const bool onGpu = !src.host || !dst.host;
  DLDevice runs = gpu.device;
  if (onGpu && gpu.runtime != GpuRuntime::kLevelZero) {
    runs.device_type = gpu.runtime == GpuRuntime::kCuda ? kDLCUDA : kDLROCM;
  }
  int64_t stream = gpu.runtime == GpuRuntime::kHip ? 0 : 1;
  if (onGpu && gpu.runtime != GpuRuntime::kLevelZero && options.stream.has_value()) {
    stream = *options.stream;
    CheckStreamValue(runs, stream, "CopyTo: stream");
    if (stream == -1) {
      Fail(ErrorCode::kInvalidArgument,
           "CopyTo: stream -1 is no stream to queue a copy on; pass a stream, or none for the "
           "runtime's default stream");
    }
  }
  // CPY-5: the source's pending writes come first: the copy's stream waits for them on the
  // device, or the host waits for them when the CPU reads the source.
  if (options.producer_stream.has_value() && *options.producer_stream != -1) {
    const int64_t producer = *options.producer_stream;
    CheckStreamValue(from.device, producer, "CopyTo: producer_stream");
    if (!src.host) {
      OrderStreams(runs, producer, stream);
    } else if (OrdersStreams(StreamFamilyOf(from.device.device_type))) {
      const GpuRuntime owner = StreamFamilyOf(from.device.device_type) == StreamFamily::kCuda
                                   ? GpuRuntime::kCuda
                                   : GpuRuntime::kHip;
      std::string error;
      detail::CopyPlace place;
      place.device_id = from.device.device_id;
      if (!Ready(owner).Copy(place, detail::CopyDirection::kHostToDevice, nullptr, nullptr, 0,
                             producer, true, &error)) {
        FailCall(error, from.device);
      }
    }
  }
  Tensor result = Allocate(from, dst, bytes);
  const bool dense =
      plan.Layout().IsContiguous() && (from.dtype.bits * from.dtype.lanes % 8 == 0 ||
                                       detail::IsPackedSubByte(from.dtype, plan.Flags()));
  const auto* first = static_cast<const unsigned char*>(from.data) + from.byte_offset;
  if (src.host && dst.host) {  // CPY-1: the host copies what it can read
    detail::CopyHostElements(from, plan.Flags(), plan.Layout().IsContiguous(), Bytes(result),
                             bytes);
    return result;
  }
  detail::Backend& backend = Ready(gpu.runtime);
  std::string error;
  auto copy = [&](detail::CopyDirection direction, void* to, const void* source, int64_t n,
                  bool wait) {
    if (!backend.Copy(gpu.place, direction, to, source, static_cast<size_t>(n), stream, wait,
                      &error)) {
      FailCall(error, gpu.device);
    }
  };
  bool pending = false;
  if (dense) {  // CPY-2: one runtime copy of the contiguous bytes
    const auto direction = src.host   ? detail::CopyDirection::kHostToDevice
                           : dst.host ? detail::CopyDirection::kDeviceToHost
                                      : detail::CopyDirection::kDeviceToDevice;
    // CPY-5: a host result is complete before it is returned: the host reads it, and no
    // stream orders the host, so a pending stream on a kDLCPU tensor would order nothing.
    const bool wait = options.synchronous || dst.host;
    copy(direction, Bytes(result), first, bytes, wait);
    pending = !wait && gpu.runtime != GpuRuntime::kLevelZero;  // L0: complete
  } else if (src.host) {  // CPY-2: gathered on the host, then copied up
    Tensor staged = AllocateHostTensor(from.dtype, from.ndim, from.shape);
    detail::CopyHostElements(from, plan.Flags(), false, Bytes(staged), bytes);
    copy(detail::CopyDirection::kHostToDevice, Bytes(result), Bytes(staged), bytes, true);
  } else {
    // CPY-2: every byte the layout reaches comes down to a staging block, the host gathers
    // the elements from it, and a GPU target gets them copied up.
    const detail::ByteSpan span = detail::ComputeSpanOrThrow("CopyTo", from.dtype, plan.Flags(),
                                                             from.ndim, from.shape, from.strides);
    std::unique_ptr<void, FreeAlignedBlock> staging(
        detail::AllocateAligned(static_cast<size_t>(span.bytes)));
    if (staging == nullptr) {
      Fail(ErrorCode::kOutOfMemory,
           "CopyTo: could not allocate " + std::to_string(span.bytes) + " staging bytes");
    }
    copy(detail::CopyDirection::kDeviceToHost, staging.get(), first + span.low, span.bytes, true);
    DLTensor down = from;
    down.data = staging.get();
    down.byte_offset = static_cast<uint64_t>(-span.low);
    if (dst.host) {
      detail::CopyHostElements(down, plan.Flags(), false, Bytes(result), bytes);
    } else {
      Tensor gathered = AllocateHostTensor(from.dtype, from.ndim, from.shape);
      detail::CopyHostElements(down, plan.Flags(), false, Bytes(gathered), bytes);
      copy(detail::CopyDirection::kHostToDevice, Bytes(result), Bytes(gathered), bytes, true);
    }
  }
  if (pending) result.stream = stream;
  return result;
}

Tensor CopyTo(const Tensor& tensor, DLDevice target, const CopyOptions& options,
              const ExportOptions& export_options) {
  ExportOptions copying = export_options;
  copying.allow_unowned = true;  // the copy is made before this returns: nothing to keep alive
  const ExportPlan plan(tensor, ExportKind::kVersioned, copying);
  if (options.producer_stream.has_value() || !tensor.stream.has_value()) {
    return CopyTo(plan, target, options);
  }
  CopyOptions ordered = options;
  ordered.producer_stream = tensor.stream;
  return CopyTo(plan, target, ordered);
}

}  // namespace dlbridge
