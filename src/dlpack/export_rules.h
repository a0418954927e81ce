// The export rules of spec/validation.md (EXP-*), each once, beside the structural rules they
// build on (dlpack_rules.h): one predicate per rule, cheap and inline, and the check that
// throws through detail::Fail when it fails. CheckExport's full sequence (src/dlpack/to_dlpack.cpp)
// calls the checks; the export's fast path (dlpack_fast_paths.h) is built from the predicates.
// Messages are built out of line (src/dlpack/dlpack_rules.cpp), only when a rule is broken.
#pragma once

#include <cstdint>

#include "devices/device_map_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/memory_space.h"
#include "dlpack/checked_math_internal.h"
#include "dlpack/dlpack_rules.h"

namespace dlbridge {
namespace detail {

/// What the export checks resolved: everything an export writes besides the layout.
struct ExportFacts {
  DLDevice device{};         ///< The resolved device (spec/device-map.md).
  uint64_t flags = 0;        ///< What a versioned export publishes.
  void* data = nullptr;      ///< Element zero's address (see EXP-17); null without elements.
  uint64_t byte_offset = 0;  ///< 0, or the layout's for keep_byte_offset and handles.
  /// The export's fast path proved it (RecogniseExport: host memory with elements), with this
  /// span: the block then keeps what it wrote for import to recognise (see RT-6).
  bool proven = false;
  ByteSpan span;
  uintptr_t first = 0;  ///< The first reachable byte's address (proven exports).
};

// ---- The predicates ----

/// EXP-7, EXP-8: the flags an export publishes: the tensor's, never IS_COPIED, READ_ONLY when
/// ExportOptions::read_only asks.
inline uint64_t PublishedFlags(uint64_t tensor_flags, bool read_only) noexcept {
  uint64_t flags = tensor_flags & ~static_cast<uint64_t>(DLPACK_FLAG_BITMASK_IS_COPIED);
  if (read_only) flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  return flags;
}

/// EXP-3: the descriptor holds its memory (an owner or a release), or the caller said it
/// keeps the memory valid itself (ExportOptions::allow_unowned).
inline bool HoldAccepted(bool has_hold, bool allow_unowned) noexcept {
  return has_hold || allow_unowned;
}

/// EXP-7: a legacy DLManagedTensor has no flags, so it cannot say READ_ONLY.
inline bool LegacyCanSayFlags(bool legacy, uint64_t published) noexcept {
  return !legacy || (published & DLPACK_FLAG_BITMASK_READ_ONLY) == 0;
}

/// EXP-9b: legacy consumers assume packed sub-byte elements, so a padded one cannot be said.
inline bool LegacyCanSayDtype(bool legacy, DLDataType dtype, uint64_t published) noexcept {
  return !legacy || IsPackedSubByte(dtype, published) ||
         (int64_t{dtype.bits} * dtype.lanes) % 8 == 0;
}

/// EXP-9: the layout lies inside the buffer: from the pointer, byte_offset plus the span's
/// lowest and highest reachable bytes fall in [0, size), every sum overflow-checked
/// (StartOf: see IMP-10). `*start` is the first reachable byte's distance from the pointer.
inline bool InsideBuffer(uint64_t byte_offset, const ByteSpan& span, int64_t size,
                         int64_t* start) noexcept {
  int64_t end = 0;
  return StartOf(byte_offset, span.low, start) && !AddOverflows(*start, span.bytes, &end) &&
         *start >= 0 && end <= size;
}

/// EXP-10: a device_id given in ExportOptions (>= 0) agrees with the tensor's.
inline bool OptionIdAgrees(int32_t option_id, int32_t device_id) noexcept {
  return option_id < 0 || option_id == device_id;
}

/// EXP-10, the labels of an export's device (what the device table alone decides; the GPU
/// runtime's answer is the device checks', src/devices/device_check.cpp).
enum class DeviceLabel : uint8_t {
  kResolved,
  kTypeContradictsSpace,  ///< Tensor::device.device_type is not one the space exports as.
  kIdContradictsOption,   ///< ExportOptions::device_id contradicts Tensor::device.device_id.
  kIdNotZero,             ///< An id > 0 for a type whose id is always 0.
};

/// EXP-10: the device an export of memory in `space` carries: Tensor::device (`given`) when
/// its type is set, else the space's default type (`default_row`, its device-table row, never
/// null) with
/// ExportOptions::device_id (`option_id`, -1: not given); the id is 0 for the types whose id
/// always is (a positive one is refused). `*device` (set on kResolved and kIdNotZero) and
/// `*row` (on kResolved) are what it resolved.
[[gnu::always_inline]] inline DeviceLabel ResolveDeviceLabel(DLDevice given, MemorySpace space,
                                                             int32_t option_id,
                                                             const DeviceTypeInfo* default_row,
                                                             DLDevice* device,
                                                             const DeviceTypeInfo** row) noexcept {
  const DeviceTypeInfo* resolved = default_row;
  DLDevice d{static_cast<DLDeviceType>(default_row->device_type), option_id};
  if (given.device_type != 0) {
    if (!TypeMatchesSpace(given.device_type, space)) {
      return DeviceLabel::kTypeContradictsSpace;
    }
    if (!OptionIdAgrees(option_id, given.device_id)) return DeviceLabel::kIdContradictsOption;
    resolved = DeviceRow(given.device_type);
    d = given;
  }
  if (resolved->id_is_zero) {
    if (d.device_id > 0) {
      *device = d;
      return DeviceLabel::kIdNotZero;
    }
    d.device_id = 0;
  }
  *device = d;
  *row = resolved;
  return DeviceLabel::kResolved;
}

/// EXP-17: element zero's address in `*data` and 0 in `*byte_offset`, as NumPy, PyTorch and
/// CuPy export (PyTorch ignores byte_offset), for the device types whose pointers allow
/// address arithmetic (`arithmetic`), unless `keep_split` (ExportOptions::keep_byte_offset)
/// asks for the descriptor's pointer and the layout's offset exactly; handles keep the split.
inline void PlaceElementZero(uintptr_t pointer, uint64_t layout_offset, bool arithmetic,
                             bool keep_split, void** data, uint64_t* byte_offset) noexcept {
  if (arithmetic && !keep_split) {
    *data = reinterpret_cast<void*>(pointer + static_cast<uintptr_t>(layout_offset));
    *byte_offset = 0;
  } else {
    *data = reinterpret_cast<void*>(pointer);
    *byte_offset = layout_offset;
  }
}

// ---- The checks: the predicate, and a cold throw naming `where` when it fails ----

/// Out of line and cold (src/dlpack/dlpack_rules.cpp): the messages of the checks below.
[[noreturn, gnu::cold]] void FailNoHold(const char* where);
[[noreturn, gnu::cold]] void FailLegacyFlags(const char* where);
[[noreturn, gnu::cold]] void FailLegacyDtype(const char* where, DLDataType dtype);
[[noreturn, gnu::cold]] void FailOutsideBuffer(const char* where, uint64_t byte_offset,
                                               const ByteSpan& span, int64_t size);
[[noreturn, gnu::cold]] void FailDeviceLabel(const char* where, DeviceLabel label, DLDevice given,
                                             MemorySpace space, int32_t option_id,
                                             DLDevice resolved);

inline void CheckHold(const char* where, bool has_hold, bool allow_unowned) {
  if (!HoldAccepted(has_hold, allow_unowned)) FailNoHold(where);  // EXP-3
}

inline void CheckLegacyFlags(const char* where, bool legacy, uint64_t published) {
  if (!LegacyCanSayFlags(legacy, published)) FailLegacyFlags(where);  // EXP-7
}

inline void CheckLegacyDtype(const char* where, bool legacy, DLDataType dtype, uint64_t published) {
  if (!LegacyCanSayDtype(legacy, dtype, published)) FailLegacyDtype(where, dtype);  // EXP-9b
}

/// EXP-9 for a tensor with elements; returns the first reachable byte's distance from the
/// pointer.
inline int64_t CheckInsideBuffer(const char* where, uint64_t byte_offset, const ByteSpan& span,
                                 int64_t size) {
  int64_t start = 0;
  if (!InsideBuffer(byte_offset, span, size, &start)) {  // EXP-9
    FailOutsideBuffer(where, byte_offset, span, size);
  }
  return start;
}

/// EXP-10's labels, resolved or refused: the device, before the GPU runtime is asked.
inline DLDevice CheckDeviceLabel(const char* where, DLDevice given, MemorySpace space,
                                 int32_t option_id) {
  DLDevice device{};
  const DeviceTypeInfo* row = nullptr;
  const DeviceLabel label = ResolveDeviceLabel(
      given, space, option_id, FindDeviceType(DefaultDeviceType(space)), &device, &row);
  if (label != DeviceLabel::kResolved) {  // EXP-10
    FailDeviceLabel(where, label, given, space, option_id, device);
  }
  return device;
}

}  // namespace detail
}  // namespace dlbridge
