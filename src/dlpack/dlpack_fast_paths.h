// The fast paths of import, export and the unchanged re-export (issue 17), beside the rules
// they are built from. Each recogniser is a conjunction of the rules' own predicates
// (dlpack_rules.h, export_rules.h) over the common case (host memory, whole-byte elements,
// extents >= 1), with FastSpan's one pass over shape and strides for the span. None enforces
// anything: false means "not proven", and the converter then runs the full sequence, which
// decides and words every error. testing::SetFastPaths(false) turns them off (see RT-5).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/layout_internal.h"
#include "devices/device_map_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/memory_descriptor.h"
#include "dlbridge/options.h"
#include "dlbridge/tensor.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/checked_math_internal.h"
#include "dlpack/dlpack_rules.h"
#include "dlpack/export_rules.h"

namespace dlbridge {
namespace detail {

/// Whether import, export and re-export try their fast paths first (testing::SetFastPaths
/// turns them off, so that a test can compare both ways). In src/dlpack/dlpack_rules.cpp.
extern std::atomic<bool> g_fast_paths;
inline bool FastPathsOn() noexcept { return g_fast_paths.load(std::memory_order_relaxed); }

/// What the import's fast path proved about a producer's layout and address.
struct FastImport {
  ByteSpan span;        ///< The reachable bytes, relative to element zero.
  uintptr_t first = 0;  ///< The first reachable byte's address.
};

/// The device row of a host type that import describes directly (no route, no runtime asked:
/// see DEV-1) with a valid id (DeviceIdValid: see CONF-DEVICE-ID), or nullptr: the device
/// condition of both import fast paths (RecogniseImportHeader, and the taking back: see RT-6).
[[gnu::always_inline]] inline const DeviceTypeInfo* HostImportRow(DLDevice device) noexcept {
  const DeviceTypeInfo* row = DeviceRow(static_cast<int32_t>(device.device_type));
  if (row == nullptr || row->import != DeviceImport::kSpace || row->space != MemorySpace::kHost ||
      !DeviceIdValid(*row, device.device_id)) {
    return nullptr;
  }
  return row;
}

/// The common import, in two halves: first everything but the layout's values and the
/// address, then (RecogniseImportLayout) one pass over shape and strides. The caller may write
/// what the first half established before the pass, so that fewer values live across it.
///
/// The first half: a host tensor (the other device types need their route and verification:
/// ImportFully) with at most kMaxDims dimensions, that every import rule but those of the
/// second half accepts, with the `flags` it carries (ImportedFlags), NULL strides allowed or
/// not (`null_strides_allowed()`, NullStridesAllowed: asked only for NULL strides) and
/// ImportOptions::require_writable. The device type's row, or nullptr. Recognises, enforcing
/// nothing: see IMP-4, see IMP-5, see IMP-6, see IMP-7, see IMP-9, see IMP-12, see IMP-15,
/// see DEV-1.
template <class Managed, class NullAllowed>
[[gnu::always_inline]] inline const DeviceTypeInfo* RecogniseImportHeader(
    const Managed& managed, uint64_t flags, NullAllowed&& null_strides_allowed,
    bool require_writable) noexcept {
  const DLTensor& t = managed.dl_tensor;
  if constexpr (!std::is_same_v<Managed, DLManagedTensor>) {
    if (!VersionReadable(managed.version) || !FlagsKnown(managed.flags)) return nullptr;
  }
  if (!NdimValid(t.ndim) || !ShapeGiven(t.ndim, t.shape) ||
      !StridesAccepted(t.ndim, t.strides, null_strides_allowed) || !DtypeValid(t.dtype) ||
      !WritableAsRequired(flags, require_writable)) {
    return nullptr;
  }
  return HostImportRow(t.device);
}

/// The second half, for a tensor the first half recognised: extents >= 1 and a span without
/// overflow (FastSpan, which copies shape then strides to `dims`: room for t.ndim of each, or
/// nullptr: declined), data given and an address range that is valid. Recognises, enforcing
/// nothing: see IMP-8, see IMP-11, see IMP-10.
[[gnu::always_inline]] inline bool RecogniseImportLayout(const DLTensor& t, int64_t* dims,
                                                         FastImport* out) noexcept {
  ByteSpan span;
  int64_t start = 0;
  uintptr_t first = 0;
  if (dims == nullptr || !FastSpan(t.dtype, t.ndim, t.shape, t.strides, dims, &span) ||
      !DataGiven(t.data, span.count) || !StartOf(t.byte_offset, span.low, &start) ||
      !AddressRangeValid(reinterpret_cast<uintptr_t>(t.data), start, span.bytes, &first)) {
    return false;
  }
  out->span = span;
  out->first = first;
  return true;
}

/// The common export: a host tensor with elements and whole-byte elements that every export
/// check accepts with `options` (`host_default_row`: the device row a host descriptor exports
/// as by default, null before static initialisation: declined). The options are read only as
/// far as the tensor gets (a reference, not values: the fast path's loads are its cost).
/// Recognises, enforcing nothing: see MD-15, see EXP-3, see EXP-13, see EXP-7, see EXP-10,
/// see GPU-8, see EXP-9, see EXP-9b (FastSpan declines sub-byte elements), see EXP-18,
/// see EXP-17.
[[gnu::always_inline]] inline bool RecogniseExport(const Tensor& tensor, bool legacy,
                                                   const ExportOptions& options,
                                                   const DeviceTypeInfo* host_default_row,
                                                   ExportFacts* out) noexcept {
  const MemoryDescriptor& descriptor = tensor.descriptor;
  const TensorLayout& layout = tensor.layout;
  const DLDataType dtype = layout.Dtype();
  const uint64_t published = PublishedFlags(tensor.flags, options.read_only);
  if (descriptor.GetMemorySpaceKind() != MemorySpace::kHost || host_default_row == nullptr ||
      !HoldAccepted(descriptor.HasOwnership(), options.allow_unowned) ||
      !FlagsKnown(tensor.flags) || !LegacyCanSayFlags(legacy, published) || !DtypeValid(dtype)) {
    return false;
  }
  DLDevice device{};
  const DeviceTypeInfo* row = nullptr;
  if (ResolveDeviceLabel(tensor.device, MemorySpace::kHost, options.device_id, host_default_row,
                         &device, &row) != DeviceLabel::kResolved ||
      !row->address_arithmetic) {
    return false;
  }
  const uintptr_t pointer = static_cast<uintptr_t>(descriptor.GetPointer());
  ByteSpan span;
  int64_t start = 0;
  uintptr_t first = 0;
  // The span the layout keeps (FastSpan's, computed when the layout was built), or the pass.
  if (!(LayoutAccess::KeptSpan(layout, &span) || FastSpan(dtype, layout.Ndim(), layout.Shape().data,
                                                          layout.Strides().data, nullptr, &span)) ||
      !InsideBuffer(layout.ByteOffset(), span, descriptor.GetSizeInBytes(), &start) ||
      !AddressRangeValid(pointer, start, span.bytes, &first)) {
    return false;
  }
  out->device = device;
  out->flags = published;
  out->proven = true;
  out->span = span;
  out->first = first;
  PlaceElementZero(pointer, layout.ByteOffset(), true, options.keep_byte_offset, &out->data,
                   &out->byte_offset);
  return true;
}

/// Whether two small padding-free values (a DLDataType: code, bits, lanes; a DLDevice: type,
/// id) are equal field by field, compared as one word.
template <class T>
[[gnu::always_inline]] inline bool SameBits(const T& a, const T& b) noexcept {
  static_assert(std::has_unique_object_representations_v<T> && sizeof(T) <= sizeof(uint64_t),
                "one word, no padding");
  uint64_t x = 0;
  uint64_t y = 0;
  std::memcpy(&x, &a, sizeof(T));
  std::memcpy(&y, &b, sizeof(T));
  return x == y;
}

/// Whether `tensor`, an import of `original`, is unchanged, so that its re-export with
/// `options` may hand back `original` (see RT-2): the layout, device and published flags are
/// the original's, and the descriptor spans exactly its reachable bytes. The original passed
/// import's rules and nothing about it changed, so no export check can refuse it; a device the
/// export would resolve otherwise (no type, a contradicting ExportOptions::device_id:
/// see EXP-10), unknown flags (see EXP-13), Level Zero (its context) and
/// DeviceVerification::kRequired (the runtime must be asked) take the full export instead.
/// `where` names the export for ComputeSpanOrThrow, which cannot throw here (the layout is the
/// original's, which import validated).
template <class Managed>
[[gnu::always_inline]] inline bool IsUnchangedImport(const Tensor& tensor, const Managed& original,
                                                     const ExportOptions& options,
                                                     const char* where) {
  const DLDevice device = tensor.device;
  const MemorySpace space = tensor.descriptor.GetMemorySpaceKind();
  if (device.device_type == 0 || options.verify_device == DeviceVerification::kRequired ||
      !OptionIdAgrees(options.device_id, device.device_id) || space == MemorySpace::kLevelZero ||
      !TypeMatchesSpace(device.device_type, space) || !FlagsKnown(tensor.flags)) {
    return false;
  }
  const DLTensor& t = original.dl_tensor;
  const TensorLayout& layout = tensor.layout;
  if (t.ndim != layout.Ndim() || !SameBits(t.dtype, layout.Dtype()) ||
      !SameBits(t.device, device)) {
    return false;
  }
  if (t.ndim > 0 && t.strides == nullptr) return false;  // ours always carry strides
  const int64_t* shape = layout.Shape().data;
  const int64_t* strides = layout.Strides().data;
  const int64_t* theirShape = t.shape;
  const int64_t* theirStrides = t.strides;
  uint64_t differs = 0;  // one loop without branches, not two memcmp calls: ndim is small
  for (int32_t i = 0, n = t.ndim; i < n; ++i) {
    differs |= static_cast<uint64_t>(theirShape[i] ^ shape[i]) |
               static_cast<uint64_t>(theirStrides[i] ^ strides[i]);
  }
  if (differs != 0) return false;
  const uint64_t published = PublishedFlags(tensor.flags, options.read_only);
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    if ((original.flags & ~static_cast<uint64_t>(DLPACK_FLAG_BITMASK_IS_COPIED)) != published) {
      return false;
    }
  } else {
    if (published != 0) return false;
  }
  // FastSpan covers the common layouts; the rest (empty, sub-byte) take the rule itself. The
  // layout is t's (compared above), so the span it keeps is FastSpan's over t.
  ByteSpan span;
  if (!FastPathsOn() || !(LayoutAccess::KeptSpan(layout, &span) ||
                          FastSpan(t.dtype, t.ndim, t.shape, t.strides, nullptr, &span))) {
    span = ComputeSpanOrThrow(where, t.dtype, published, t.ndim, t.shape, t.strides);
  }
  if (span.count == 0) return tensor.descriptor.GetSizeInBytes() == 0;
  const uintptr_t elementZero = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  return elementZero ==
             static_cast<uintptr_t>(tensor.descriptor.GetPointer()) + layout.ByteOffset() &&
         tensor.descriptor.GetSizeInBytes() == span.bytes;
}

}  // namespace detail
}  // namespace dlbridge
