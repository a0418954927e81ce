// Copies through the GPU runtimes (include/dlbridge/device_copy.h; spec/copies.md CPY-*):
// CopyTo and CopyToHost, in named steps: route (which side runs the copy, from the device
// table's copy columns), queue (the stream), wait (the producer), allocate (who allocates: the
// table's copy_allocator) and copy (one runtime copy, or staged through the host copier). The
// runtime calls are the backends' (Backend::Allocate/Free/Copy), reached through ReadyBackend;
// the host side is host_copy.cpp's (AllocateHostTensor, CopyHostElements), which calls nothing
// here.
#include "dlbridge/device_copy.h"

#include <memory>
#include <new>
#include <string>
#include <utility>

#include "copies/host_copy_internal.h"
#include "core/error_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/host_copy.h"
#include "dlbridge/runtime.h"
#include "dlpack/dlpack_rules.h"
#include "runtimes/runtime_backend_internal.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {

using detail::Fail;

namespace {

// One side of a copy: its device, its row of the device table, and where the runtime runs it.
struct Side {
  DLDevice device{};
  const DeviceTypeInfo* row = nullptr;
  bool host = false;  ///< the CPU reads or writes it at its own address
  detail::CopyPlace place;
};

// How a copy runs: its two sides and the GPU side that runs it (null: host to host).
struct Route {
  Side src;
  Side dst;
  const Side* gpu = nullptr;
};

std::string DeviceText(DLDevice device) {
  return std::string(DeviceTypeName(device.device_type)) + " device " +
         std::to_string(device.device_id);
}

bool IsCopySource(const DeviceTypeInfo& row) { return row.host_accessible || row.has_runtime; }
bool IsCopyTarget(const DeviceTypeInfo& row) { return row.copy_allocator != CopyAllocator::kNone; }

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
  side.row = FindDeviceType(device.device_type);
  side.place.device_id = device.device_id;
  if (side.row == nullptr || !IsCopySource(*side.row)) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string("CopyTo: cannot copy from ") + DeviceTypeName(device.device_type) +
             " memory; accepted sources: " + DeviceTypeNames(&IsCopySource));
  }
  side.host = side.row->host_accessible;
  if (!side.host && side.row->runtime == GpuRuntime::kLevelZero) {
    PlaceLevelZero(options, "source", &side);
  }
  return side;
}

// CPY-1: the targets, the device table's copy_allocator column: host memory the library
// allocates, and each runtime's device memory.
Side TargetSide(DLDevice target, const CopyOptions& options) {
  Side side;
  side.device = target;
  side.row = FindDeviceType(target.device_type);
  side.place.device_id = target.device_id;
  if (side.row == nullptr || !IsCopyTarget(*side.row)) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string("CopyTo: cannot copy to ") + DeviceTypeName(target.device_type) +
             "; accepted targets: " + DeviceTypeNames(&IsCopyTarget));
  }
  side.host = side.row->copy_allocator == CopyAllocator::kHost;
  if (target.device_id < 0 || (side.row->id_is_zero && target.device_id != 0)) {
    Fail(ErrorCode::kDeviceMismatch,
         "CopyTo: target " + DeviceText(target) + " is not a device; " + side.row->name +
             (side.row->id_is_zero ? std::string(" is device 0")
                                   : std::string("'s id is its ordinal (>= 0)")));
  }
  if (!side.host && side.row->runtime == GpuRuntime::kLevelZero) {
    PlaceLevelZero(options, "target", &side);
  }
  return side;
}

// CPY-1: a Level Zero target's id is the index (see GPU-10) of the device the copy allocates on,
// the options' or the registered one; another id would label the result with a device its
// memory is not on.
void CheckLevelZeroTarget(const Side& side) {
  (void)detail::ReadyBackend(GpuRuntime::kLevelZero, "CopyTo: ");
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

// Step 1, route: both sides, and the GPU side that runs the copy (CPY-2; GPU to GPU only on one
// device of one runtime).
Route RouteCopy(const DLTensor& from, DLDevice target, const CopyOptions& options) {
  Route route;
  route.src = SourceSide(from.device, options);
  route.dst = TargetSide(target, options);
  if (!route.dst.host && route.dst.row->runtime == GpuRuntime::kLevelZero) {
    CheckLevelZeroTarget(route.dst);
  }
  if (!route.src.host && !route.dst.host &&
      (route.src.row->runtime != route.dst.row->runtime ||
       route.src.device.device_id != route.dst.device.device_id)) {
    Fail(ErrorCode::kUnsupportedDevice,
         "CopyTo: " + DeviceText(from.device) + " to " + DeviceText(target) +
             ": GPU to GPU copies stay on one device; copy through the host "
             "(CopyTo(CopyTo(t, {kDLCPU, 0}), target))");
  }
  if (!route.src.host) {
    route.gpu = &route.src;
  } else if (!route.dst.host) {
    route.gpu = &route.dst;
  }
  return route;
}

// Step 2, queue: the stream the GPU side runs the copy on: the caller's, else the default
// stream of its family (the device table's default_stream); -1 for a runtime without streams.
int64_t QueueStream(const Route& route, const CopyOptions& options) {
  if (route.gpu == nullptr || !OrdersStreams(route.gpu->row->stream_family)) return -1;
  if (!options.stream.has_value()) return route.gpu->row->default_stream;
  const int64_t stream = *options.stream;
  CheckStreamValue(route.gpu->device, stream, "CopyTo: stream");
  if (stream == -1) {
    Fail(ErrorCode::kInvalidArgument,
         "CopyTo: stream -1 is no stream to queue a copy on; pass a stream, or none for the "
         "runtime's default stream");
  }
  return stream;
}

// CPY-4: a failed runtime call is named, with its error and the device.
[[noreturn]] void FailCall(const std::string& error, DLDevice device) {
  Fail(ErrorCode::kRuntimeUnavailable,
       "CopyTo: " + error + " (" + DeviceText(device) + "); nothing was copied or kept");
}

// Step 3, wait: CPY-5: the source's pending writes come first: the copy's stream waits for them
// on the device, or the host waits for them when the CPU reads the source (through the runtime
// of its stream family, the table's copy_runtime column).
void WaitForProducer(const DLTensor& from, const Route& route, int64_t stream,
                     const CopyOptions& options) {
  if (!options.producer_stream.has_value() || *options.producer_stream == -1) return;
  const int64_t producer = *options.producer_stream;
  CheckStreamValue(from.device, producer, "CopyTo: producer_stream");
  const DeviceTypeInfo& row = *route.src.row;
  if (!route.src.host) {
    OrderStreams(route.src.device, producer, stream);
    return;
  }
  if (!OrdersStreams(row.stream_family) || !row.has_copy_runtime) return;
  std::string error;
  detail::CopyPlace place;
  place.device_id = from.device.device_id;
  if (!detail::ReadyBackend(row.copy_runtime, "CopyTo: ")
           .Copy(place, detail::CopyDirection::kHostToDevice, nullptr, nullptr, 0, producer, true,
                 &error)) {
    FailCall(error, from.device);
  }
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

// Step 4, allocate: a new C-contiguous tensor of the plan's dtype and shape on the target,
// owning its memory, allocated by whom the table's copy_allocator says (CPY-3: freed through
// the runtime, once; 256-byte aligned, see CPY-6).
Tensor AllocateResult(const DLTensor& from, const Side& side, int64_t bytes) {
  if (side.row->copy_allocator == CopyAllocator::kHost) {
    return AllocateHostTensor(from.dtype, from.ndim, from.shape);
  }
  TensorLayout layout = TensorLayout::FromArrays(from.dtype, from.ndim, from.shape, nullptr);
  const GpuRuntime runtime = side.row->runtime;
  // CPY-7: a runtime that cannot be used fails with its own code and message after "CopyTo: ".
  detail::Backend& backend = detail::ReadyBackend(runtime, "CopyTo: ");
  void* pointer = nullptr;
  std::string error;
  // A tensor without elements still gets a (small) allocation, as AllocateHostTensor does.
  const size_t size = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  if (!backend.Allocate(side.place, size, &pointer, &error)) FailCall(error, side.device);
  auto* block = new (std::nothrow) DeviceBlock{runtime, side.place, pointer};
  if (block == nullptr) {
    (void)backend.Free(side.place, pointer, &error);
    Fail(ErrorCode::kOutOfMemory, "CopyTo: out of host memory");
  }
  Tensor t;
  t.descriptor.SetRelease(&FreeDeviceBlock, block);  // holds the allocation from here on
  t.descriptor.Set(static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer)), bytes,
                   MemorySpaceName(side.row->space));
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

// Step 5, copy: the elements into `result`, by the host when both sides are host memory, else
// by the GPU side's runtime: one copy of a dense layout, or staged through the host copier.
// Returns whether the copy is left pending on `stream`.
bool CopyElements(const ExportPlan& plan, const Route& route, int64_t stream,
                  const CopyOptions& options, const Tensor& result, int64_t bytes) {
  const DLTensor from = plan.View();
  if (route.gpu == nullptr) {  // CPY-1: the host copies what it can read
    detail::CopyHostElements(from, plan.Flags(), plan.Layout().IsContiguous(), Bytes(result),
                             bytes);
    return false;
  }
  const Side& gpu = *route.gpu;
  detail::Backend& backend = detail::ReadyBackend(gpu.row->runtime, "CopyTo: ");
  std::string error;
  auto copy = [&](detail::CopyDirection direction, void* to, const void* source, int64_t n,
                  bool wait) {
    if (!backend.Copy(gpu.place, direction, to, source, static_cast<size_t>(n), stream, wait,
                      &error)) {
      FailCall(error, gpu.device);
    }
  };
  const bool dense =
      plan.Layout().IsContiguous() && (from.dtype.bits * from.dtype.lanes % 8 == 0 ||
                                       detail::IsPackedSubByte(from.dtype, plan.Flags()));
  const auto* first = static_cast<const unsigned char*>(from.data) + from.byte_offset;
  if (dense) {  // CPY-2: one runtime copy of the contiguous bytes
    const auto direction = route.src.host   ? detail::CopyDirection::kHostToDevice
                           : route.dst.host ? detail::CopyDirection::kDeviceToHost
                                            : detail::CopyDirection::kDeviceToDevice;
    // CPY-5: a host result is complete before it is returned: the host reads it, and no
    // stream orders the host, so a pending stream on a kDLCPU tensor would order nothing.
    const bool wait = options.synchronous || route.dst.host || stream == -1;
    copy(direction, Bytes(result), first, bytes, wait);
    return !wait;
  }
  if (route.src.host) {  // CPY-2: gathered on the host, then copied up
    Tensor staged = AllocateHostTensor(from.dtype, from.ndim, from.shape);
    detail::CopyHostElements(from, plan.Flags(), false, Bytes(staged), bytes);
    copy(detail::CopyDirection::kHostToDevice, Bytes(result), Bytes(staged), bytes, true);
    return false;
  }
  // CPY-2: every byte the layout reaches comes down to a staging block, the host gathers the
  // elements from it, and a GPU target gets them copied up.
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
  if (route.dst.host) {
    detail::CopyHostElements(down, plan.Flags(), false, Bytes(result), bytes);
  } else {
    Tensor gathered = AllocateHostTensor(from.dtype, from.ndim, from.shape);
    detail::CopyHostElements(down, plan.Flags(), false, Bytes(gathered), bytes);
    copy(detail::CopyDirection::kHostToDevice, Bytes(result), Bytes(gathered), bytes, true);
  }
  return false;
}

ExportPlan CopyPlan(const Tensor& tensor, const ExportOptions& export_options) {
  ExportOptions copying = export_options;
  copying.allow_unowned = true;  // the copy is made before this returns: nothing to keep alive
  return ExportPlan(tensor, ExportKind::kVersioned, copying);
}

}  // namespace

Tensor CopyTo(const ExportPlan& plan, DLDevice target, const CopyOptions& options) {
  const DLTensor from = plan.View();
  const Route route = RouteCopy(from, target, options);
  const int64_t bytes = detail::PackedSizeOrThrow("CopyTo", from.dtype, from.ndim, from.shape);
  const int64_t stream = QueueStream(route, options);
  WaitForProducer(from, route, stream, options);
  Tensor result = AllocateResult(from, route.dst, bytes);
  if (CopyElements(plan, route, stream, options, result, bytes)) result.stream = stream;
  return result;
}

Tensor CopyTo(const Tensor& tensor, DLDevice target, const CopyOptions& options,
              const ExportOptions& export_options) {
  const ExportPlan plan = CopyPlan(tensor, export_options);
  if (options.producer_stream.has_value() || !tensor.stream.has_value()) {
    return CopyTo(plan, target, options);
  }
  CopyOptions ordered = options;
  ordered.producer_stream = tensor.stream;
  return CopyTo(plan, target, ordered);
}

// HC-2: the plan's elements in C order into a new host tensor; HC-3: memory the CPU cannot read
// is copied down by its runtime, as CopyTo copies it.
Tensor CopyToHost(const ExportPlan& plan) { return CopyTo(plan, DLDevice{kDLCPU, 0}); }

Tensor CopyToHost(const Tensor& tensor, const ExportOptions& options) {
  return CopyToHost(CopyPlan(tensor, options));
}

}  // namespace dlbridge
