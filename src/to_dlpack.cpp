// Export: Tensor -> DLManagedTensorVersioned / DLManagedTensor, one allocation each. Every
// export is the unchanged-import fast path, or the checks (detail::CheckExport, here) and then
// the block (src/export_internal.h); ExportPlan (src/export_plan.cpp) runs the two apart.
#include "dlbridge/to_dlpack.h"

#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "checked_math_internal.h"
#include "descriptor_access_internal.h"
#include "device_check_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlpack_rules.h"
#include "export_internal.h"
#include "ledger_internal.h"
#include "memory_space_internal.h"
#include "reexport_internal.h"
#include "runtime_internal.h"

namespace dlbridge {
namespace {

using detail::Fail;

// EXP-10: the export's device, from Tensor::device or the space's default (device-map.md).
DLDevice ResolveDevice(const char* where, const Tensor& tensor, const ExportOptions& options) {
  const MemorySpace space = tensor.descriptor.GetMemorySpaceKind();
  const char* spaceName = MemorySpaceName(space);
  DLDevice device{};
  if (tensor.device.device_type != 0) {
    if (!DeviceTypeMatchesSpace(tensor.device.device_type, space)) {
      Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": Tensor::device.device_type " +
                                           std::to_string(tensor.device.device_type) + " (" +
                                           DeviceTypeName(tensor.device.device_type) +
                                           ") contradicts memory space \"" + spaceName +
                                           "\"; leave it 0 to derive it from the space");
    }
    device = tensor.device;
    if (options.device_id >= 0 && options.device_id != device.device_id) {
      Fail(ErrorCode::kDeviceMismatch,
           std::string(where) + ": ExportOptions::device_id " + std::to_string(options.device_id) +
               " contradicts Tensor::device.device_id " + std::to_string(device.device_id));
    }
  } else {
    device.device_type = DefaultDeviceType(space);
    device.device_id = options.device_id;
  }
  const DeviceTypeInfo* row = FindDeviceType(device.device_type);
  if (row->id_is_zero) {
    if (device.device_id > 0) {
      Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": device_id " +
                                           std::to_string(device.device_id) + " for " + row->name +
                                           "; DLPack requires device_id 0 for this device type");
    }
    device.device_id = 0;
  }
  void* zeContext = nullptr;  // only Level Zero pointers need a context and a device
  void* zeDevice = nullptr;
  if (space == MemorySpace::kLevelZero) {
    detail::LevelZeroHandles(options.level_zero_context, options.level_zero_device, &zeContext,
                             &zeDevice);
  }
  if (space == MemorySpace::kLevelZero && (zeContext == nullptr || zeDevice == nullptr)) {
    Fail(ErrorCode::kMissingContext,
         std::string(where) +
             ": memory space \"level_zero\" needs ExportOptions::level_zero_context and "
             "level_zero_device (or SetLevelZeroContext); a Level Zero pointer means nothing "
             "without its context");
  }
  // GPU spaces: a missing id comes from the pointer's runtime; a given one is checked unless
  // verification is off (src/device_check.cpp; see GPU-2).
  const bool hasBytes = tensor.descriptor.GetSizeInBytes() > 0;
  const void* pointer =
      hasBytes
          ? reinterpret_cast<const void*>(static_cast<intptr_t>(tensor.descriptor.GetPointer()))
          : nullptr;
  detail::CheckExportDevice(where, space, tensor.device.device_type != 0, &device, pointer,
                            options.verify_device, zeContext, zeDevice);
  return device;
}

// EXP-7, EXP-8: the flags an export publishes (never IS_COPIED; READ_ONLY when asked).
uint64_t PublishedFlags(const Tensor& tensor, const ExportOptions& options) {
  uint64_t flags = tensor.flags & ~static_cast<uint64_t>(DLPACK_FLAG_BITMASK_IS_COPIED);
  if (options.read_only) flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  return flags;
}

}  // namespace

namespace detail {

void FailExportBlock(const char* where, const char* what) {
  Fail(ErrorCode::kOutOfMemory, std::string(where) + ": could not " + what + " the export block");
}

namespace {

// The device a host descriptor exports as by default (the device map's row for it), read once
// at load. Null until then (an export from another library's static initialiser): the fast
// path then declines.
const DeviceTypeInfo* const kHostDefaultRow = FindDeviceType(DefaultDeviceType(MemorySpace::kHost));

// The common export (issue 17): a host tensor with a hold, elements and whole-byte elements,
// that every export check accepts, proven with one pass over shape and strides (FastSpan). False
// when anything is unusual or wrong: CheckExport's full sequence then decides, and words every
// error. Nothing here enforces a rule; each test only recognises what the checks accept:
// see MD-15, see EXP-3, see EXP-13, see EXP-7, see EXP-10, see GPU-8, see EXP-9, see EXP-18,
// see EXP-17.
bool FastExportFacts(const Tensor& tensor, const ExportOptions& options, bool legacy,
                     ExportFacts* out) noexcept {
  const MemoryDescriptor& descriptor = tensor.descriptor;
  const TensorLayout& layout = tensor.layout;
  const DLDataType dtype = layout.Dtype();
  const uint64_t flags = PublishedFlags(tensor, options);
  if (descriptor.GetMemorySpaceKind() != MemorySpace::kHost ||
      (!descriptor.HasOwnership() && !options.allow_unowned) ||
      (tensor.flags & ~detail::KnownFlags()) != 0 ||
      (legacy && (flags & DLPACK_FLAG_BITMASK_READ_ONLY)) || dtype.lanes == 0 ||
      !detail::DtypeBitsValid(dtype.code, dtype.bits) ||
      layout.ByteOffset() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  const DeviceTypeInfo* row = kHostDefaultRow;
  if (row == nullptr) return false;
  DLDevice device{};
  if (tensor.device.device_type != 0) {  // a type of the host space, and no contradicting id
    row = FindDeviceType(tensor.device.device_type);
    if (row == nullptr || !row->exported || row->space != MemorySpace::kHost ||
        (options.device_id >= 0 && options.device_id != tensor.device.device_id)) {
      return false;
    }
    device = tensor.device;
  } else {
    device.device_type = static_cast<DLDeviceType>(row->device_type);
    device.device_id = options.device_id;
  }
  if (row->id_is_zero) {
    if (device.device_id > 0) return false;
    device.device_id = 0;
  }
  if (!row->address_arithmetic) return false;
  detail::ByteSpan span;
  int64_t start = 0;
  int64_t end = 0;
  if (!detail::FastSpan(dtype, layout.Ndim(), layout.Shape().data, layout.Strides().data, nullptr,
                        &span) ||
      detail::AddOverflows(static_cast<int64_t>(layout.ByteOffset()), span.low, &start) ||
      detail::AddOverflows(start, span.bytes, &end) || start < 0 ||
      end > descriptor.GetSizeInBytes()) {
    return false;
  }
  const uintptr_t pointer = static_cast<uintptr_t>(descriptor.GetPointer());
  const uintptr_t first = pointer + static_cast<uintptr_t>(start);
  if (first < pointer || first == 0 || first + static_cast<uintptr_t>(span.bytes) < first ||
      first > static_cast<uintptr_t>(std::numeric_limits<int64_t>::max())) {
    return false;
  }
  out->device = device;
  out->flags = flags;
  if (options.keep_byte_offset) {
    out->data = reinterpret_cast<void*>(pointer);
    out->byte_offset = layout.ByteOffset();
  } else {
    out->data = reinterpret_cast<void*>(pointer + static_cast<uintptr_t>(layout.ByteOffset()));
    out->byte_offset = 0;
  }
  return true;
}

// The full sequence, out of line: everything the fast path does not prove, and every error.
[[gnu::noinline]] ExportFacts CheckExportFully(const char* where, const Tensor& tensor,
                                               const ExportOptions& options, bool legacy);

}  // namespace

// The checks of both exports.
ExportFacts CheckExport(const char* where, const Tensor& tensor, const ExportOptions& options,
                        bool legacy) {
  ExportFacts facts;
  if (FastPathsOn() && FastExportFacts(tensor, options, legacy, &facts)) return facts;
  return CheckExportFully(where, tensor, options, legacy);
}

namespace {

ExportFacts CheckExportFully(const char* where, const Tensor& tensor, const ExportOptions& options,
                             bool legacy) {
  const MemoryDescriptor& descriptor = tensor.descriptor;
  detail::CheckMemorySpace(where, descriptor.GetMemorySpaceKind());  // see MD-15
  if (!descriptor.HasOwnership() && !options.allow_unowned) {        // EXP-3
    Fail(ErrorCode::kNoHold,
         std::string(where) +
             ": the descriptor holds nothing (no owner, no release), so nothing keeps the "
             "memory alive for the consumer; give it a hold (SetOwner or SetRelease), or set "
             "ExportOptions::allow_unowned if you keep the memory valid until the deleter runs");
  }
  detail::CheckFlagsOrThrow(where, tensor.flags, "Tensor::flags");  // EXP-13
  const uint64_t flags = PublishedFlags(tensor, options);
  if (legacy && (flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {  // EXP-7
    Fail(ErrorCode::kReadOnly, std::string(where) +
                                   ": the tensor is read-only and a legacy DLManagedTensor cannot "
                                   "say so; use ToDLPackVersioned");
  }
  const TensorLayout& layout = tensor.layout;
  detail::CheckDtypeOrThrow(where, layout.Dtype());                 // EXP-13
  if (legacy && !detail::IsPackedSubByte(layout.Dtype(), flags) &&  // EXP-9b
      (int64_t{layout.Dtype().bits} * layout.Dtype().lanes) % 8 != 0) {
    Fail(ErrorCode::kInvalidFlags, std::string(where) + ": padded sub-byte " +
                                       detail::DtypeText(layout.Dtype()) +
                                       " cannot be said in a legacy DLManagedTensor; use "
                                       "ToDLPackVersioned");
  }
  ExportFacts facts;
  facts.flags = flags;
  facts.device = ResolveDevice(where, tensor, options);
  const detail::ByteSpan span = detail::ComputeSpanOrThrow(
      where, layout.Dtype(), flags, layout.Ndim(), layout.Shape().data, layout.Strides().data);
  if (span.count > 0) {  // EXP-9: the layout lies inside the buffer
    const int64_t size = descriptor.GetSizeInBytes();
    int64_t start = 0;
    int64_t end = 0;
    const bool overflow =
        layout.ByteOffset() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ||
        detail::AddOverflows(static_cast<int64_t>(layout.ByteOffset()), span.low, &start) ||
        detail::AddOverflows(start, span.bytes, &end);
    if (overflow || start < 0 || end > size) {
      Fail(ErrorCode::kOutOfBounds,
           std::string(where) + ": the layout reaches bytes [" +
               (overflow ? std::string("overflow")
                         : std::to_string(start) + ", " + std::to_string(end)) +
               ") from the pointer (byte offset " + std::to_string(layout.ByteOffset()) +
               ") but the descriptor describes [0, " + std::to_string(size) + ")");
    }
    const uintptr_t pointer = static_cast<uintptr_t>(descriptor.GetPointer());
    const bool arithmetic = FindDeviceType(facts.device.device_type)->address_arithmetic;
    if (arithmetic) {
      // EXP-18: import's address rule (see IMP-10) on the same bytes, so that what export accepts
      // the import of it accepts too (an address at or past 2^63 is refused by both).
      const detail::ThrowSink sink(where);
      uintptr_t first = 0;
      detail::CheckAddress(sink, pointer, layout.ByteOffset(), start, span, &first,
                           "the descriptor's pointer");
    }
    // EXP-6: data and byte_offset only for a tensor with elements. EXP-17: element zero's
    // address in data (PyTorch ignores byte_offset), unless asked for the split or data is a
    // handle that arithmetic cannot move.
    if (arithmetic && !options.keep_byte_offset) {
      facts.data = reinterpret_cast<void*>(pointer + static_cast<uintptr_t>(layout.ByteOffset()));
      facts.byte_offset = 0;
    } else {
      facts.data = reinterpret_cast<void*>(pointer);
      facts.byte_offset = layout.ByteOffset();
    }
  }
  return facts;
}

}  // namespace
}  // namespace detail

namespace {

// An unchanged re-export hands back the tensor FromDLPack consumed. It is checked before the
// export checks: the original passed import's, and nothing about it changed. Level Zero and
// a contradicting ExportOptions::device_id take the full path (and its errors).
template <class Managed>
bool IsUnchangedImport(const Tensor& tensor, const Managed* original,
                       const ExportOptions& options) {
  const DLDevice device = tensor.device;
  if (device.device_type == 0 || options.verify_device == DeviceVerification::kRequired ||
      (options.device_id >= 0 && options.device_id != device.device_id) ||
      tensor.descriptor.GetMemorySpaceKind() == MemorySpace::kLevelZero ||
      !DeviceTypeMatchesSpace(device.device_type, tensor.descriptor.GetMemorySpaceKind()) ||
      (tensor.flags & ~detail::KnownFlags()) != 0) {
    return false;
  }
  const uint64_t flags = PublishedFlags(tensor, options);
  const DLTensor& t = original->dl_tensor;
  const TensorLayout& layout = tensor.layout;
  if (t.ndim != layout.Ndim() || t.dtype.code != layout.Dtype().code ||
      t.dtype.bits != layout.Dtype().bits || t.dtype.lanes != layout.Dtype().lanes ||
      t.device.device_type != device.device_type || t.device.device_id != device.device_id) {
    return false;
  }
  if (t.ndim > 0 && t.strides == nullptr) return false;  // ours always carry strides
  const int64_t* shape = layout.Shape().data;
  const int64_t* strides = layout.Strides().data;
  for (int32_t i = 0; i < t.ndim; ++i) {  // one loop, not two memcmp calls: ndim is small
    if (t.shape[i] != shape[i] || t.strides[i] != strides[i]) return false;
  }
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if ((original->flags & ~static_cast<uint64_t>(DLPACK_FLAG_BITMASK_IS_COPIED)) != flags) {
      return false;
    }
  } else {
    if (flags != 0) return false;
  }
  // The layout is the original's, which import validated: this cannot throw. FastSpan covers
  // the common layouts; the rest (empty, sub-byte) take the rule itself.
  detail::ByteSpan span;
  if (!detail::FastPathsOn() ||
      !detail::FastSpan(t.dtype, t.ndim, t.shape, t.strides, nullptr, &span)) {
    span = detail::ComputeSpanOrThrow(
        std::is_same_v<Managed, DLManagedTensor> ? "ToDLPack" : "ToDLPackVersioned", t.dtype, flags,
        t.ndim, t.shape, t.strides);
  }
  if (span.count == 0) return tensor.descriptor.GetSizeInBytes() == 0;
  const uintptr_t elementZero = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  return elementZero ==
             static_cast<uintptr_t>(tensor.descriptor.GetPointer()) + layout.ByteOffset() &&
         tensor.descriptor.GetSizeInBytes() == span.bytes;
}

template <class Managed>
Managed* Export(const char* where, Tensor& tensor, const ExportOptions& options) {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  MemoryDescriptor& descriptor = tensor.descriptor;
  constexpr ReleaseFunction kImportRelease =
      kLegacy ? &detail::ReleaseImportedLegacy : &detail::ReleaseImportedVersioned;
  if (descriptor.GetRelease() == kImportRelease && descriptor.GetReleaseContext() != nullptr) {
    auto* original = static_cast<Managed*>(descriptor.GetReleaseContext());
    if (IsUnchangedImport(tensor, original, options)) {  // RT-2: the original, no allocation
      detail::DescriptorAccess::Disarm(descriptor);
      return original;
    }
  }
  // RT-3, RT-4: a changed import, or one whose original has no strides, is wrapped below (its
  // release context is the original, whose deleter runs when the new export's does).

  // Prepare, then emit with the tensor's hold moved in (what ExportPlan does with a
  // keep-alive of the caller's).
  const detail::ExportFacts facts = detail::CheckExport(where, tensor, options, kLegacy);
  // LT-6: the one allocation of the export.
  void* memory = detail::AllocateExport<Managed>(where, tensor.layout.Ndim(), ExportAllocator{});
  // EXP-11: nothing below can fail; the hold moves only once the export is certain.
  if (detail::DescriptorAccess::HoldsOwner(descriptor)) {  // EXP-2: the block keeps the owner
    std::shared_ptr<const void> owner = detail::DescriptorAccess::TakeOwner(descriptor);
    return detail::FillExport<Managed>(memory, facts, tensor.layout, KeepAlive{}, &owner,
                                       ExportAllocator{});
  }
  // EXP-1: a release hold moves in, manager_ctx its context; with no hold (allowed: see
  // EXP-3) there is no keep-alive.
  const KeepAlive keepAlive{descriptor.GetRelease(), descriptor.GetReleaseContext()};
  if (keepAlive.release != nullptr) detail::DescriptorAccess::Disarm(descriptor);
  return detail::FillExport<Managed>(memory, facts, tensor.layout, keepAlive, nullptr,
                                     ExportAllocator{});
}

}  // namespace

DLManagedTensorVersioned* ToDLPackVersioned(Tensor&& tensor, const ExportOptions& options) {
  return Export<DLManagedTensorVersioned>("ToDLPackVersioned", tensor, options);
}

DLManagedTensor* ToDLPack(Tensor&& tensor, const ExportOptions& options) {
  return Export<DLManagedTensor>("ToDLPack", tensor, options);
}

}  // namespace dlbridge
