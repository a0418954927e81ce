/// @file
/// The Viskores bridge (spec/bridges.md, VSK-*): a dlbridge::Tensor adopted into a Viskores
/// ArrayHandle, zero copy, its hold moved into the Viskores buffer's deleter; and a Viskores
/// ArrayHandle exported as tensors held by a copy of the handle. Header-only; needs a Viskores
/// build (Viskores 1.2's `viskores_cont`, or the Viskores 1.1 that VTK 9.6 carries as
/// `VTK::vtkviskores`): target dlbridge::viskores.
///
/// Directions, named as the other bridges name them: `Adopt*` takes a tensor (and its hold)
/// into the framework, `ToTensor*` describes the framework's memory as a tensor.
#pragma once

#include <viskores/Types.h>
#include <viskores/VecTraits.h>
#include <viskores/cont/ArrayHandleBasic.h>
#include <viskores/cont/ArrayHandleRuntimeVec.h>
#include <viskores/cont/ArrayHandleSOA.h>
#include <viskores/cont/DeviceAdapterTag.h>
#include <viskores/cont/RuntimeDeviceTracker.h>
#include <viskores/cont/Token.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dlbridge/bridge_kit.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dtype.h"
#include "dlbridge/error.h"
#include "dlbridge/export_plan.h"
#include "dlbridge/owner.h"
#include "dlbridge/runtime.h"
#include "dlbridge/tensor.h"

/// @namespace dlbridge::viskores
/// The Viskores bridge: Adopt, AdoptVec, AdoptRuntimeVec and AdoptSOA (a tensor into a
/// Viskores ArrayHandle, the hold moving with it), ToTensor and ToTensors (an ArrayHandle as
/// tensors that hold a copy of it).
namespace dlbridge {
namespace viskores {

/// Which access a ToTensor export asks of Viskores: kRead exports read-only tensors
/// (DLPACK_FLAG_BITMASK_READ_ONLY); kWrite asks for write access, which also makes the memory
/// on the requested device the only valid copy, as a Viskores write does.
enum class Access { kRead, kWrite };

namespace detail {

// VSK-2: the one mapping of DLPack device types to the Viskores adapters this build has.
// Host-readable memory (the device table's host_addressable: CPU, CUDA and ROCm pinned) is
// host memory to Viskores (DeviceAdapterTagUndefined); CUDA device and managed memory go to
// the CUDA adapter, or Kokkos built on CUDA; ROCm memory to Kokkos built on HIP. Anything else
// (Level Zero: its pointers mean nothing without their context; Metal; a GPU this build has
// no adapter for) has no adapter: -2, below every adapter id.
constexpr ::viskores::Int8 kNoAdapter = -2;
inline ::viskores::Int8 AdapterIdFor(int32_t device_type) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  if (row == nullptr) return kNoAdapter;
  if (row->host_addressable) return VISKORES_DEVICE_ADAPTER_UNDEFINED;
#if defined(VISKORES_ENABLE_CUDA)
  if (device_type == kDLCUDA || device_type == kDLCUDAManaged) return VISKORES_DEVICE_ADAPTER_CUDA;
#elif defined(VISKORES_KOKKOS_CUDA)
  if (device_type == kDLCUDA || device_type == kDLCUDAManaged)
    return VISKORES_DEVICE_ADAPTER_KOKKOS;
#endif
#if defined(VISKORES_KOKKOS_HIP)
  if (device_type == kDLROCM) return VISKORES_DEVICE_ADAPTER_KOKKOS;
#endif
  // Unified memory the CPU reads as it is, on a build with no adapter for its GPU.
  if (row->host_accessible) return VISKORES_DEVICE_ADAPTER_UNDEFINED;
  return kNoAdapter;
}

// The stream value (DLPack's convention) a consumer on `adapter` waits on: Viskores' CUDA
// adapter, and Kokkos built on CUDA, queue their work on the per-thread default stream
// (value 2); -1 where no stream can be named (host memory; HIP's per-thread stream has no
// DLPack value).
inline int64_t ConsumerStreamOf(::viskores::Int8 adapter) noexcept {
  if (adapter == VISKORES_DEVICE_ADAPTER_CUDA) return 2;
#if defined(VISKORES_KOKKOS_CUDA)
  if (adapter == VISKORES_DEVICE_ADAPTER_KOKKOS) return 2;
#endif
  return -1;
}

// The container a Viskores buffer's deleter frees: the adopted tensor's descriptor, whose
// destruction drops the producer's hold (its release or owner), once, on the dropping thread.
struct AdoptedHold {
  MemoryDescriptor descriptor;
};
inline void DropAdoptedHold(void* container) noexcept {
  delete static_cast<AdoptedHold*>(container);
}

// One tensor checked for adoption: the export rules' own checks (ExportPlan: the layout lies
// in the described bytes, addresses and sizes are overflow-checked, the device is resolved),
// then what a Viskores buffer needs. Nothing is taken.
struct Checked {
  void* data = nullptr;
  ::viskores::Id values = 0;  // values of T, as the buffer counts them
  DLDevice device{};
  ::viskores::Int8 adapter = kNoAdapter;
};

[[noreturn]] inline void RefuseDevice(const kit::Site& site, DLDevice device) {
  site.Fail(ErrorCode::kUnsupportedDevice,
            std::string("the tensor is on ") + DeviceTypeName(device.device_type) + " device " +
                std::to_string(device.device_id) +
                ", which this Viskores build has no device adapter for (it reads host memory, and "
                "CUDA or ROCm memory where Viskores was built with that adapter): copy it to the "
                "host first (CopyToHost)");
}

// The export rules' checks of `tensor` (an unowned tensor is the caller's deliberate choice),
// their errors keeping their code and naming the bridge's call.
inline ExportPlan PlanFor(const kit::Site& site, const Tensor& tensor) {
  ExportOptions options;
  options.allow_unowned = true;
  try {
    return ExportPlan(tensor, ExportKind::kVersioned, options);
  } catch (const Error& e) {
    site.Fail(e.code(), std::string("the tensor cannot be read as described: ") + e.what());
  }
}

// VSK-5: `components` 0 takes a 1-D tensor; otherwise (n, components).
template <class T>
Checked Check(const char* who, const Tensor& tensor, int64_t components) {
  const kit::Site site{"viskores", who};
  // VSK-2 first: a device no adapter reads is refused as such, before the export rules ask
  // for what only that device needs (a Level Zero context, a Metal resolver).
  const int32_t declared = tensor.device.device_type != 0
                               ? tensor.device.device_type
                               : DefaultDeviceType(tensor.descriptor.GetMemorySpaceKind());
  if (AdapterIdFor(declared) == kNoAdapter)
    RefuseDevice(site, tensor.device.device_type != 0
                           ? tensor.device
                           : DLDevice{static_cast<DLDeviceType>(declared), 0});
  const ExportPlan plan = PlanFor(site, tensor);
  // The kit's view checks: the adapter reads the memory where it lives (any device; VSK-2
  // placed it), as one packed, writable run of aligned values.
  kit::ViewNeeds needs;
  needs.view = components == 0 ? "a Viskores basic array (values,)"
                               : "a Viskores Vec array (tuples, components)";
  needs.dtype = DataTypeOf<T>();
  needs.min_ndim = needs.max_ndim = components == 0 ? 1 : 2;
  needs.strides = kit::StrideRule::kRowMajor;  // one packed run of values
  needs.writes = true;                         // a Viskores array can always be written
  needs.read_only_advice = "adopt a writable tensor or a copy";
  needs.any_device = true;
  needs.alignment = alignof(T);
  const kit::CheckedView view = kit::CheckView(tensor, needs, site);
  const TensorLayout& layout = plan.Layout();
  if (components > 0 && layout.Shape()[1] != components) {
    site.Fail(ErrorCode::kInvalidShape, "the tensor has " + kit::LayoutText(layout) +
                                            " but the array's Vec has " +
                                            std::to_string(components) + " components");
  }
  Checked c;
  c.device = plan.Device();
  c.adapter = AdapterIdFor(c.device.device_type);
  if (c.adapter == kNoAdapter) RefuseDevice(site, c.device);
  if (c.adapter != VISKORES_DEVICE_ADAPTER_UNDEFINED &&
      !::viskores::cont::GetRuntimeDeviceTracker().CanRunOn(
          ::viskores::cont::make_DeviceAdapterId(c.adapter))) {
    site.Fail(ErrorCode::kUnsupportedDevice,
              std::string("the tensor is on ") + DeviceTypeName(c.device.device_type) +
                  " but Viskores cannot run on that device here (no GPU, or the adapter is "
                  "disabled in the runtime device tracker)");
  }
  // VSK-4: no stream orders a host read.
  if (tensor.stream && *tensor.stream != -1 && ConsumerStreamOf(c.adapter) < 0 &&
      OrdersStreams(StreamFamilyOf(c.device.device_type))) {
    site.Fail(ErrorCode::kInvalidArgument,
              "the tensor has work pending on stream " + std::to_string(*tensor.stream) +
                  " and Viskores' work on it cannot be ordered after that stream here (host "
                  "memory, or an adapter whose stream has no DLPack value): synchronise the "
                  "stream first");
  }
  // Every element counted: a runtime-Vec buffer counts each component as a value.
  if (view.elements > static_cast<int64_t>(std::numeric_limits<::viskores::Id>::max())) {
    site.Fail(ErrorCode::kOverflow, "the tensor has " + std::to_string(view.elements) +
                                        " elements, past viskores::Id (this build's index type)");
  }
  c.data = plan.Data();
  c.values = static_cast<::viskores::Id>(view.elements / (components == 0 ? 1 : components));
  return c;
}

// VSK-4: the producer's pending stream is ordered before Viskores' own stream; nothing is
// taken yet, so a failure here leaves the hold with the caller.
inline void OrderBeforeViskores(const Tensor& tensor, const Checked& c) {
  const int64_t consumer = ConsumerStreamOf(c.adapter);
  if (tensor.stream && *tensor.stream != -1 && consumer >= 0) {
    OrderStreams(c.device, *tensor.stream, consumer);
  }
}

// VSK-1: a basic handle over checked memory whose deleter frees `hold`: created with the hold
// still empty, so that a throw while Viskores builds its buffer releases nothing. VSK-3: the
// reallocater is Viskores' InvalidRealloc (the constructor's default), so the buffer never grows.
template <class V>
::viskores::cont::ArrayHandleBasic<V> Install(const Checked& c, AdoptedHold* hold) {
  return ::viskores::cont::ArrayHandleBasic<V>(static_cast<V*>(c.data), hold, c.values,
                                               ::viskores::cont::make_DeviceAdapterId(c.adapter),
                                               &DropAdoptedHold);
}

// The empty hold is the buffer's from the moment Viskores records it (its destructor frees it
// even when a later step of the construction throws); an allocation failure before that leaks
// the empty block, never the producer's hold.
// `wrap` makes the handle the caller returns from the basic one (it may allocate: a
// runtime-Vec's metadata); the hold moves only after it, so a throw anywhere leaves it.
template <class V, class Wrap>
auto AdoptChecked(Tensor&& tensor, const Checked& c, Wrap&& wrap) {
  OrderBeforeViskores(tensor, c);
  auto* hold = new AdoptedHold;
  auto handle = wrap(Install<V>(c, hold));
  hold->descriptor = std::move(tensor.descriptor);  // noexcept: the hold moves
  return handle;
}

template <class V>
::viskores::cont::ArrayHandleBasic<V> AdoptChecked(Tensor&& tensor, const Checked& c) {
  return AdoptChecked<V>(std::move(tensor), c, [](auto basic) { return basic; });
}

template <class T>
struct IsVec : std::false_type {};
template <class C, ::viskores::IdComponent N>
struct IsVec<::viskores::Vec<C, N>> : std::true_type {};

// The device an export reads on: the host unless `device` names one this build's adapters read.
inline ::viskores::cont::DeviceAdapterId ExportAdapter(const char* who, DLDevice device) {
  const ::viskores::Int8 id = AdapterIdFor(device.device_type);
  if (id == kNoAdapter) {
    kit::Site{"viskores", who}.Fail(ErrorCode::kUnsupportedDevice,
                                    std::string("this Viskores build has no device ") +
                                        "adapter for " + DeviceTypeName(device.device_type) +
                                        "; export to kDLCPU, or to a device it has");
  }
  return ::viskores::cont::make_DeviceAdapterId(id);
}

// The keep-alive of an export: a copy of the handle, and the token that keeps Viskores from
// moving or overwriting device memory it prepared for the consumer.
template <class Handle>
struct ExportHold {
  Handle handle;
  ::viskores::cont::Token token;
  // The host allocation itself: the handle keeps its buffer object, not the memory, which
  // Viskores frees when the array is resized or released or a device writes it.
  ::viskores::cont::internal::BufferInfo host;
};

// VSK-6: `components` 0 describes `values` values as 1-D, else (values, components).
template <class C, class Handle>
Tensor Describe(const char* who, Handle handle, ::viskores::Id values, int64_t components,
                Access access, DLDevice device, const char* role) {
  const ::viskores::cont::DeviceAdapterId adapter = ExportAdapter(who, device);
  auto hold = std::make_unique<ExportHold<Handle>>();
  hold->handle = std::move(handle);
  const void* data = nullptr;
  const bool on_host =
      adapter == ::viskores::cont::make_DeviceAdapterId(VISKORES_DEVICE_ADAPTER_UNDEFINED);
  // Host memory: the handle copy is the hold (a token held for the tensor's life would make
  // this thread's next write to the array wait for itself). Device memory: the token too.
  if (access == Access::kWrite) {
    data = on_host ? hold->handle.GetWritePointer()
                   : hold->handle.GetWritePointer(adapter, hold->token);
  } else {
    data =
        on_host ? hold->handle.GetReadPointer() : hold->handle.GetReadPointer(adapter, hold->token);
  }
  if (on_host) hold->host = hold->handle.GetBuffers()[0].GetHostBufferInfo();
  std::vector<int64_t> shape{static_cast<int64_t>(values)};
  if (components > 0) shape.push_back(components);
  const int64_t bytes = static_cast<int64_t>(values) * (components > 0 ? components : 1) *
                        static_cast<int64_t>(sizeof(C));
  Tensor tensor;
  tensor.layout = TensorLayout(DataTypeOf<C>(), shape);
  tensor.descriptor.Set(data, bytes, "host", role);
  if (on_host) {
    tensor.device = DLDevice{kDLCPU, 0};
  } else {
    tensor.device = device;
    tensor.descriptor.SetMemorySpace(FindDeviceType(device.device_type)->space);
  }
  if (access == Access::kRead) tensor.flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  tensor.descriptor.SetOwner(MakeOwner(std::move(hold)));
  return tensor;
}

}  // namespace detail

/// The DLPack device types whose memory Adopt takes in this build and on this machine (the
/// table of VSK-2: the host-readable types, and the GPU types whose adapter Viskores can run
/// on here), in the device table's order.
// VSK-2: the same mapping and runtime check Adopt applies, for callers that ask first.
inline std::vector<int32_t> AdoptableDeviceTypes() {
  std::vector<int32_t> types;
  int count = 0;
  const DeviceTypeInfo* table = DeviceTable(&count);
  for (int i = 0; i < count; ++i) {
    const ::viskores::Int8 adapter = detail::AdapterIdFor(table[i].device_type);
    if (adapter == detail::kNoAdapter) continue;
    if (adapter == VISKORES_DEVICE_ADAPTER_UNDEFINED ||
        ::viskores::cont::GetRuntimeDeviceTracker().CanRunOn(
            ::viskores::cont::make_DeviceAdapterId(adapter))) {
      types.push_back(table[i].device_type);
    }
  }
  return types;
}

/// A 1-D tensor of dtype DataTypeOf<T>() adopted as a basic ArrayHandle, zero copy.
///
/// On success the tensor's hold (its descriptor's owner or release) moves into the Viskores
/// buffer's deleter and drops exactly once, when the last copy of the handle (and of every
/// handle sharing its buffer) goes, on whichever thread that is; `tensor` is left without a
/// hold. The buffer cannot grow: resizing it with Allocate makes the next access throw
/// viskores::cont::ErrorBadAllocation, never a write past the producer's memory. Host-readable
/// memory is host memory to Viskores; CUDA (and ROCm) memory is tagged with that device's
/// adapter where this Viskores build has one, and the producer's pending stream is ordered
/// before Viskores' stream.
///
/// Throws dlbridge::Error, taking nothing (the hold stays in `tensor`): the export rules'
/// errors for a tensor whose layout or addresses are invalid; kInvalidDtype (another dtype),
/// kInvalidShape (not 1-D), kInvalidStrides (not contiguous), kReadOnly (a read-only tensor:
/// Viskores arrays are writable), kUnsupportedDevice (Level Zero, Metal, or a GPU this build
/// or machine cannot run on), kInvalidArgument (misaligned; work pending on a stream for
/// memory Viskores reads as host memory), kOverflow (more values than viskores::Id counts).
// VSK-1: the tensor's values as one basic buffer.
template <class T>
::viskores::cont::ArrayHandleBasic<T> Adopt(Tensor&& tensor) {
  static_assert(std::is_arithmetic_v<T>,
                "dlbridge::viskores::Adopt<T>: T is the value type "
                "(float, viskores::Int32, ...); for Vec values use "
                "AdoptVec<T, N> or AdoptRuntimeVec<T>");
  const detail::Checked c = detail::Check<T>("Adopt", tensor, 0);
  return detail::AdoptChecked<T>(std::move(tensor), c);
}

/// A 2-D `(tuples, N)` tensor of dtype DataTypeOf<T>() adopted as a basic ArrayHandle of
/// viskores::Vec<T, N>, zero copy: tuple i is row i. Ownership, growth, devices and errors as
/// Adopt (kInvalidShape for another rank or another component count).
// VSK-1: rows as Viskores' own Vec values.
template <class T, ::viskores::IdComponent N>
::viskores::cont::ArrayHandleBasic<::viskores::Vec<T, N>> AdoptVec(Tensor&& tensor) {
  static_assert(std::is_arithmetic_v<T> && N > 0,
                "dlbridge::viskores::AdoptVec<T, N>: T is the "
                "component type, N > 0 the component count");
  static_assert(sizeof(::viskores::Vec<T, N>) == N * sizeof(T), "Vec<T, N> is not packed");
  const detail::Checked c = detail::Check<T>("AdoptVec", tensor, N);
  return detail::AdoptChecked<::viskores::Vec<T, N>>(std::move(tensor), c);
}

/// A 2-D `(tuples, components)` tensor adopted as an ArrayHandleRuntimeVec<T> whose component
/// count is the tensor's second extent (any count >= 1, known at run time), zero copy.
/// Ownership, growth, devices and errors as Adopt (kInvalidShape for another rank or for 0
/// components).
// VSK-1: rows as runtime-sized Vecs over one basic buffer of tuples * components values.
template <class T>
::viskores::cont::ArrayHandleRuntimeVec<T> AdoptRuntimeVec(Tensor&& tensor) {
  static_assert(std::is_arithmetic_v<T>,
                "dlbridge::viskores::AdoptRuntimeVec<T>: T is the "
                "component type");
  const int64_t components = tensor.layout.Ndim() == 2 ? tensor.layout.Shape()[1] : 0;
  if (components < 1 || components > std::numeric_limits<::viskores::IdComponent>::max()) {
    kit::Site{"viskores", "AdoptRuntimeVec"}.Fail(
        ErrorCode::kInvalidShape,
        "the tensor has " + kit::LayoutText(tensor.layout) +
            " but the array takes a 2-D tensor (tuples, components) with 1 to " +
            std::to_string(std::numeric_limits<::viskores::IdComponent>::max()) + " components");
  }
  detail::Checked c = detail::Check<T>("AdoptRuntimeVec", tensor, components);
  c.values *= components;  // the components array counts every value
  return detail::AdoptChecked<T>(std::move(tensor), c, [components](auto basic) {
    return ::viskores::cont::ArrayHandleRuntimeVec<T>(
        static_cast<::viskores::IdComponent>(components), basic);
  });
}

/// N 1-D tensors of equal length and dtype DataTypeOf<T>(), one per component, adopted as an
/// ArrayHandleSOA of viskores::Vec<T, N>, zero copy. All or nothing: every tensor is checked
/// (as Adopt checks it, plus equal lengths: kInvalidShape naming both) before any hold moves;
/// on success each component's hold moves into its own buffer's deleter and drops when that
/// buffer's last handle goes.
// VSK-1: struct-of-arrays, each component its own buffer.
template <class T, ::viskores::IdComponent N>
::viskores::cont::ArrayHandleSOA<::viskores::Vec<T, N>> AdoptSOA(
    std::array<Tensor, static_cast<std::size_t>(N)>&& components) {
  static_assert(std::is_arithmetic_v<T> && N > 0,
                "dlbridge::viskores::AdoptSOA<T, N>: T is the "
                "component type, N > 0 the component count");
  std::array<detail::Checked, static_cast<std::size_t>(N)> checked{};
  for (std::size_t i = 0; i < checked.size(); ++i) {
    const std::string who = "AdoptSOA: component " + std::to_string(i) + ",";
    checked[i] = detail::Check<T>(who.c_str(), components[i], 0);
    if (checked[i].values != checked[0].values) {
      kit::Site{"viskores", "AdoptSOA"}.Fail(
          ErrorCode::kInvalidShape,
          "component " + std::to_string(i) + " has " + std::to_string(checked[i].values) +
              " values but component 0 has " + std::to_string(checked[0].values) +
              ": every component has one per tuple");
    }
  }
  for (std::size_t i = 0; i < checked.size(); ++i) {
    detail::OrderBeforeViskores(components[i], checked[i]);
  }
  // Each buffer owns its (still empty) hold, as in Adopt; the holds move only once every
  // buffer is in the handle.
  std::array<detail::AdoptedHold*, static_cast<std::size_t>(N)> holds{};
  ::viskores::cont::ArrayHandleSOA<::viskores::Vec<T, N>> soa;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    holds[i] = new detail::AdoptedHold;
    soa.SetArray(static_cast<::viskores::IdComponent>(i), detail::Install<T>(checked[i], holds[i]));
  }
  for (std::size_t i = 0; i < checked.size(); ++i) {
    holds[i]->descriptor = std::move(components[i].descriptor);
  }
  return soa;
}

/// A basic ArrayHandle's values as a tensor, zero copy: 1-D `(values,)` for scalar values,
/// 2-D `(values, N)` for viskores::Vec<T, N> values, dtype DataTypeOf of the component type.
/// The tensor's descriptor holds a copy of the handle (MakeOwner), so the buffer lives until
/// the last consumer lets go; where `device` is a GPU this build's adapters read, the memory
/// is prepared there and the access token is held too (other writers wait for it to drop).
/// Access::kRead marks the tensor read-only. Throws dlbridge::Error(kUnsupportedDevice) for a
/// device this build has no adapter for; Viskores' own errors (e.g. ErrorBadAllocation) pass
/// through. Nothing is kept on failure.
// VSK-6: basic and Vec handles.
template <class V>
Tensor ToTensor(const ::viskores::cont::ArrayHandle<V, ::viskores::cont::StorageTagBasic>& handle,
                Access access = Access::kRead, DLDevice device = {kDLCPU, 0}) {
  using Traits = ::viskores::VecTraits<V>;
  using C = typename Traits::ComponentType;
  static_assert(std::is_arithmetic_v<C> && (std::is_arithmetic_v<V> || detail::IsVec<V>::value),
                "dlbridge::viskores::ToTensor: the values are scalars or viskores::Vec of "
                "scalars (a Matrix or a nested Vec has no DLPack layout here)");
  const int64_t components = detail::IsVec<V>::value ? Traits::NUM_COMPONENTS : 0;
  return detail::Describe<C>("ToTensor", ::viskores::cont::ArrayHandleBasic<V>(handle),
                             handle.GetNumberOfValues(), components, access, device, "data");
}

/// An ArrayHandleRuntimeVec's values as a 2-D `(values, components)` tensor over its
/// components array, zero copy; hold, access, devices and errors as ToTensor of a basic handle.
// VSK-6: runtime-sized Vecs.
template <class T>
Tensor ToTensor(const ::viskores::cont::ArrayHandleRuntimeVec<T>& handle,
                Access access = Access::kRead, DLDevice device = {kDLCPU, 0}) {
  return detail::Describe<T>("ToTensor", handle.GetComponentsArray(), handle.GetNumberOfValues(),
                             handle.GetNumberOfComponents(), access, device, "data");
}

/// An ArrayHandleSOA's components as N 1-D tensors, zero copy, with roles "component_0",
/// "component_1", ...; each holds a copy of its component's handle. Access, devices and errors
/// as ToTensor.
// VSK-6: struct-of-arrays, one tensor per component.
template <class T, ::viskores::IdComponent N>
std::vector<Tensor> ToTensors(const ::viskores::cont::ArrayHandleSOA<::viskores::Vec<T, N>>& handle,
                              Access access = Access::kRead, DLDevice device = {kDLCPU, 0}) {
  std::vector<Tensor> out;
  out.reserve(static_cast<std::size_t>(N));
  for (::viskores::IdComponent i = 0; i < N; ++i) {
    const auto component = handle.GetArray(i);
    // Each component's own length: Viskores checks equal lengths in debug builds only.
    if (component.GetNumberOfValues() != handle.GetArray(0).GetNumberOfValues()) {
      kit::Site{"viskores", "ToTensors"}.Fail(
          ErrorCode::kInvalidShape, "component " + std::to_string(i) + " has " +
                                        std::to_string(component.GetNumberOfValues()) +
                                        " values but component 0 has " +
                                        std::to_string(handle.GetArray(0).GetNumberOfValues()));
    }
    const std::string role = "component_" + std::to_string(i);
    out.push_back(detail::Describe<T>("ToTensors", component, component.GetNumberOfValues(), 0,
                                      access, device, role.c_str()));
  }
  return out;
}

}  // namespace viskores
}  // namespace dlbridge
