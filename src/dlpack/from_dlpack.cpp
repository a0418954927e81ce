// Import: DLManagedTensorVersioned / DLManagedTensor -> Tensor, validated before use.
#include "dlbridge/from_dlpack.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/callback_internal.h"
#include "core/descriptor_access_internal.h"
#include "core/layout_internal.h"
#include "devices/device_check_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlpack/dlpack_fast_paths.h"
#include "dlpack/dlpack_rules.h"
#include "dlpack/export_internal.h"
#include "dlpack/reexport_internal.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {
namespace detail {

// Dropping an import runs the producer's deleter (IMP-1) through CallDeleter: a throw stays here.
void ReleaseImportedVersioned(void* managed) noexcept {
  CallDeleter(static_cast<DLManagedTensorVersioned*>(managed));
}

void ReleaseImportedLegacy(void* managed) noexcept {
  CallDeleter(static_cast<DLManagedTensor*>(managed));
}

}  // namespace detail

namespace {

using detail::Fail;
using detail::ThrowSink;

// Calls the deleter exactly once if the import does not complete (IMP-2).
template <class Managed>
struct ConsumeOnFailure {
  Managed* managed;
  ~ConsumeOnFailure() {
    if (managed != nullptr && managed->deleter != nullptr) detail::CallDeleter(managed);
  }
};

// What the rules established about a producer's tensor, for the steps after them.
struct Checked {
  const DeviceTypeInfo* row = nullptr;
  uint64_t flags = 0;
  detail::ByteSpan span;
  bool addressed = false;  // elements and data: there are bytes to locate
  int64_t start = 0;       // the first reachable byte's distance from data
};

// The rules' inputs for a managed tensor and ImportOptions, by their predicates
// (NullStridesAllowed: see IMP-9; ImportedFlags: see IMP-15): a legacy tensor has neither a version
// nor flags.
template <class Managed>
bool NullStridesAllowedFor(const Managed& managed, const ImportOptions& options) noexcept {
  if constexpr (std::is_same_v<Managed, DLManagedTensor>) {
    (void)managed;
    return detail::NullStridesAllowed(true, DLPackVersion{}, options.allow_null_strides);
  } else {
    return detail::NullStridesAllowed(false, managed.version, options.allow_null_strides);
  }
}

template <class Managed>
uint64_t ImportedFlagsOf(const Managed& managed, const ImportOptions& options) noexcept {
  if constexpr (std::is_same_v<Managed, DLManagedTensor>) {
    (void)managed;
    return detail::ImportedFlags(true, 0, options.legacy_read_only);
  } else {
    return detail::ImportedFlags(false, managed.flags, options.legacy_read_only);
  }
}

// Step 1, the rules (dlpack_rules.h): header, shape, dtype, device, span, data, byte_offset.
template <class Managed>
Checked CheckRules(const ThrowSink& sink, const Managed& managed, const ImportOptions& options) {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  Checked checked;
  if constexpr (!kLegacy) {
    detail::CheckVersion(sink, managed.version);  // nothing past `flags` before this passes
    detail::CheckFlags(sink, managed.flags);
  }
  checked.flags = ImportedFlagsOf(managed, options);
  const DLTensor& t = managed.dl_tensor;
  detail::CheckShape(sink, t, NullStridesAllowedFor(managed, options), !kLegacy);
  detail::CheckDtype(sink, t.dtype, checked.flags);
  checked.row = detail::CheckDevice(sink, t.device);
  int64_t contiguous[TensorLayout::kMaxDims];
  detail::ComputeSpan(sink, t.dtype, checked.flags, t.ndim, t.shape,
                      detail::EffectiveStrides(t, contiguous), &checked.span);
  checked.addressed = detail::CheckData(sink, t.data, checked.span) &&
                      detail::CheckByteOffset(sink, t.byte_offset, checked.span, &checked.start);
  return checked;
}

// Step 2, the device: can this build describe memory of this type? Every known type as the
// device table decides (DEV-1: rejected types here, unknown ones in CheckDevice), kDLOneAPI
// with a context (IMP-16), kDLMetal through a resolver (IMP-17).
struct DeviceRoute {
  void* zeContext = nullptr;
  const MetalResolver* resolver = nullptr;
};

DeviceRoute RouteDevice(const char* where, const DeviceTypeInfo& row,
                        const ImportOptions& options) {
  DeviceRoute route;
  if (row.import == DeviceImport::kRejected) {
    Fail(ErrorCode::kUnsupportedDevice, std::string(where) + ": device_type " +
                                            std::to_string(row.device_type) + " (" + row.name +
                                            ") is not supported: " + row.reason);
  }
  if (row.space == MemorySpace::kLevelZero) {  // only Level Zero pointers need the context
    void* zeDevice = nullptr;
    detail::LevelZeroHandles(options.level_zero_context, nullptr, &route.zeContext, &zeDevice);
  }
  if (row.import == DeviceImport::kNeedsContext && route.zeContext == nullptr) {
    Fail(ErrorCode::kMissingContext,
         std::string(where) + ": device_type " + row.name +
             " needs ImportOptions::level_zero_context (or SetLevelZeroContext): a Level Zero "
             "pointer means nothing without the context it was allocated from");
  }
  if (row.import == DeviceImport::kNeedsResolver) {
    route.resolver = options.metal_resolver ? options.metal_resolver : GetMetalResolver();
    if (route.resolver == nullptr) {
      Fail(ErrorCode::kMissingContext,
           std::string(where) +
               ": device_type kDLMetal holds an id<MTLBuffer>, not an address; "
               "register a MetalResolver (SetMetalResolver or ImportOptions)");
    }
  }
  return route;
}

// Metal: the shared-storage buffer's host contents stand for its handle (IMP-17).
uintptr_t ResolveMetal(const char* where, const MetalResolver& resolver, void* handle,
                       int64_t start, int64_t bytes) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(handle);
  MetalBufferInfo info;
  if (!resolver.Resolve(handle, info)) {
    Fail(ErrorCode::kInvalidArgument,
         std::string(where) + ": the MetalResolver does not know buffer " + detail::Hex(base));
  }
  if (info.storage != MetalStorageMode::kShared || info.contents == nullptr) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string(where) + ": Metal buffer " + detail::Hex(base) + " has " +
             (info.storage == MetalStorageMode::kPrivate      ? "private"
              : info.storage == MetalStorageMode::kMemoryless ? "memoryless"
              : info.storage == MetalStorageMode::kManaged    ? "managed"
                                                              : "shared (no contents)") +
             " storage; only shared storage has a host pointer that can be described");
  }
  int64_t end = 0;
  if (start < 0 || detail::AddOverflows(start, bytes, &end) ||
      static_cast<uint64_t>(end) > info.length) {
    Fail(ErrorCode::kOutOfBounds, std::string(where) + ": the tensor reaches past the " +
                                      std::to_string(info.length) + "-byte Metal buffer");
  }
  return reinterpret_cast<uintptr_t>(info.contents);
}

// The common import (issue 17), recognised by the rules module (detail::RecogniseImportHeader,
// then RecogniseImportLayout's one pass over shape and strides, which writes them into
// `result`'s storage as it goes) and described here. False when anything is unusual or wrong,
// with `result` partly written: the caller makes it a new Tensor, then the full sequence runs,
// decides and words every error.
template <class Managed>
[[gnu::always_inline]] inline bool TryFastImport(const Managed& managed,
                                                 const ImportOptions& options,
                                                 Tensor& result) noexcept {
  const DLTensor& t = managed.dl_tensor;
  const uint64_t flags = ImportedFlagsOf(managed, options);
  const DeviceTypeInfo* row = detail::RecogniseImportHeader(
      managed, flags, [&] { return NullStridesAllowedFor(managed, options); },
      options.require_writable);
  if (row == nullptr) return false;
  // Written before the pass, so that none of these values is held across it.
  result.device = detail::ImportedDevice(*row, t.device);
  result.flags = flags;
  detail::LayoutAccess::Begin(result.layout, t.dtype, t.ndim);
  detail::FastImport fast;
  if (!detail::RecogniseImportLayout(t, detail::LayoutAccess::Storage(result.layout, t.ndim),
                                     &fast)) {
    return false;
  }
  detail::LayoutAccess::Complete(result.layout, static_cast<uint64_t>(-fast.span.low), fast.span);
  detail::DescriptorAccess::Describe(result.descriptor, static_cast<int64_t>(fast.first),
                                     fast.span.bytes, MemorySpace::kHost);
  return true;
}

// The full sequence, out of line so that the fast path's frame stays small: `result` (the
// unfilled one) made a new Tensor, every rule through the ThrowSink, the device route, and
// `result` filled.
template <class Managed>
[[gnu::noinline]] void ImportFully(const char* where, Managed* managed,
                                   const ImportOptions& options, Tensor& result) {
  // The result as a declined fast path left it (unfilled, perhaps partly written) becomes a
  // new Tensor first; nothing unwritten is read on the way.
  detail::DescriptorAccess::Clear(result.descriptor);
  result = Tensor();
  if (managed == nullptr) {  // IMP-3: nothing to consume
    Fail(ErrorCode::kInvalidArgument, std::string(where) + ": the managed tensor is null");
  }
  ConsumeOnFailure<Managed> guard{managed};  // IMP-2: from here on, every failure consumes
  const ThrowSink sink(where);
  const Checked checked = CheckRules(sink, *managed, options);
  const DeviceRoute route = RouteDevice(where, *checked.row, options);
  if (!detail::WritableAsRequired(checked.flags, options.require_writable)) {  // see IMP-15
    Fail(ErrorCode::kReadOnly,
         std::string(where) +
             ": the tensor is read-only and ImportOptions::require_writable is set");
  }

  // Step 3, describe: the reachable bytes become the descriptor (IMP-14).
  const DLTensor& t = managed->dl_tensor;
  detail::LayoutAccess::Fill(result.layout, t.dtype, t.ndim, t.shape, t.strides);
  result.device = detail::ImportedDevice(*checked.row, t.device);      // see DEV-3
  if (route.resolver != nullptr) result.device = DLDevice{kDLCPU, 0};  // a host address now
  result.flags = checked.flags;
  if (checked.addressed) {
    uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
    if (route.resolver != nullptr) {
      base = ResolveMetal(where, *route.resolver, t.data, checked.start, checked.span.bytes);
    }
    uintptr_t pointer = 0;
    detail::CheckAddress(sink, base, t.byte_offset, checked.start, checked.span, &pointer);
    if (route.resolver == nullptr && checked.row->space != MemorySpace::kHost) {
      // The pointer's runtime must agree with the device unless verification is off (see GPU-5).
      detail::CheckImportDevice(where, t.device, reinterpret_cast<const void*>(pointer),
                                options.verify_device, route.zeContext);
    }
    detail::DescriptorAccess::Describe(result.descriptor, static_cast<int64_t>(pointer),
                                       checked.span.bytes, checked.row->space);
    result.layout.SetByteOffset(static_cast<uint64_t>(-checked.span.low));
  } else {
    result.descriptor.SetMemorySpace(checked.row->space);
  }
  if (managed->deleter != nullptr) {  // IMP-1: the deleter becomes the release; IMP-3: or none
    detail::DescriptorAccess::Arm(result.descriptor, detail::kImportRelease<Managed>, managed);
  }
  guard.managed = nullptr;
}

// RT-6: one of dlbridge's own exports, unchanged since (ExportBlock::Unchanged), is taken back:
// described from what its export proved and wrote, its hold moved into `result` and its block
// freed without the deleter. The import's options still apply, through the rules' predicates
// (the flags a legacy tensor carries, require_writable: see IMP-15), and so does the device
// table (a host type import describes: see DEV-1). False, with `result` partly written, when
// anything differs: the caller makes it a new Tensor and the import runs as for any producer.
template <class Managed>
[[gnu::always_inline]] inline bool TakeBackOwnExport(Managed& managed,
                                                     detail::ExportBlock<Managed>& block,
                                                     const ImportOptions& options,
                                                     Tensor& result) noexcept {
  int64_t* dims = detail::LayoutAccess::Storage(result.layout, detail::kSpareDims);
  const detail::KeptExport* kept = dims != nullptr ? block.Unchanged(dims) : nullptr;
  if (kept == nullptr) return false;
  const DLTensor& t = managed.dl_tensor;
  const uint64_t flags = ImportedFlagsOf(managed, options);
  const DeviceTypeInfo* row = detail::HostImportRow(t.device);
  if (row == nullptr || !detail::WritableAsRequired(flags, options.require_writable)) return false;
  detail::LayoutAccess::Begin(result.layout, t.dtype, t.ndim);
  detail::LayoutAccess::Complete(result.layout, static_cast<uint64_t>(-kept->span.low), kept->span);
  result.device = detail::ImportedDevice(*row, t.device);
  result.flags = flags;
  detail::DescriptorAccess::Describe(result.descriptor, static_cast<int64_t>(kept->first),
                                     kept->span.bytes, MemorySpace::kHost);
  return detail::TakeBackExport(&block, result.descriptor);
}

// A default value from a call, not a constant: GCC clears the whole Tensor (272 bytes, one
// `rep stos`) before a braced initializer in which any member is a constant.
template <class T>
T Blank() noexcept {
  return T{};
}

// The import's result before a path writes it: device, flags and stream a new Tensor's, the
// descriptor and layout unfilled (DescriptorAccess::Unfilled, LayoutAccess::Unfilled).
inline Tensor UnfilledResult() noexcept {
  return Tensor{detail::DescriptorAccess::Unfilled(), detail::LayoutAccess::Unfilled(),
                Blank<DLDevice>(), Blank<uint64_t>(), Blank<std::optional<int64_t>>()};
}

template <class Managed>
[[gnu::always_inline]] inline Tensor Import(const char* where, Managed* managed,
                                            const ImportOptions& options) {
  // Unfilled: a fast path stores each field of the description and layout once; when none
  // takes the tensor, the result becomes a new Tensor's first.
  Tensor result = UnfilledResult();
  if (managed != nullptr && detail::FastPathsOn()) {
    if (detail::ExportBlock<Managed>* block = detail::OwnExport(*managed)) {
      if (TakeBackOwnExport(*managed, *block, options, result)) return result;
    } else if (TryFastImport(*managed, options, result)) {
      // IMP-1 as in ImportFully: the deleter becomes the release; IMP-3: or none.
      if (managed->deleter != nullptr) {
        detail::DescriptorAccess::Arm(result.descriptor, detail::kImportRelease<Managed>, managed);
      } else {
        detail::DescriptorAccess::Disarm(result.descriptor);
      }
      return result;
    }
  }
  ImportFully(where, managed, options, result);
  return result;
}

// The options of the one-argument imports: known here, so their checks fold away.
constexpr ImportOptions kDefaultOptions{};

}  // namespace

Tensor FromDLPack(DLManagedTensorVersioned* managed, const ImportOptions& options) {
  return Import("FromDLPack(DLManagedTensorVersioned*)", managed, options);
}

Tensor FromDLPack(DLManagedTensor* managed, const ImportOptions& options) {
  return Import("FromDLPack(DLManagedTensor*)", managed, options);
}

Tensor FromDLPack(DLManagedTensorVersioned* managed) {
  return Import("FromDLPack(DLManagedTensorVersioned*)", managed, kDefaultOptions);
}

Tensor FromDLPack(DLManagedTensor* managed) {
  return Import("FromDLPack(DLManagedTensor*)", managed, kDefaultOptions);
}

}  // namespace dlbridge
