// Export: Tensor -> DLManagedTensorVersioned / DLManagedTensor, one allocation each. Every
// export is the unchanged-import hand-back, or the checks (detail::CheckExport, here) and then
// the block (src/dlpack/export_internal.h); ExportPlan (src/dlpack/export_plan.cpp) runs the two
// apart. Only orchestration: every test is the rules module's (dlpack_rules.h, export_rules.h, and
// the fast recognisers built from them, dlpack_fast_paths.h).
#include "dlbridge/to_dlpack.h"

#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "core/descriptor_access_internal.h"
#include "core/ledger_internal.h"
#include "core/memory_space_internal.h"
#include "devices/device_check_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlpack/dlpack_fast_paths.h"
#include "dlpack/dlpack_rules.h"
#include "dlpack/export_internal.h"
#include "dlpack/export_rules.h"
#include "dlpack/reexport_internal.h"
#include "runtimes/runtime_internal.h"

namespace dlbridge {
namespace {

using detail::Fail;

// The export's device (see EXP-10): its labels by the rules (CheckDeviceLabel), then the Level
// Zero handles and, for GPU spaces, the pointer's runtime.
DLDevice ResolveDevice(const char* where, const Tensor& tensor, const ExportOptions& options) {
  const MemorySpace space = tensor.descriptor.GetMemorySpaceKind();
  DLDevice device = detail::CheckDeviceLabel(where, tensor.device, space, options.device_id);
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
  // verification is off (src/devices/device_check.cpp; see GPU-2).
  const bool hasBytes = tensor.descriptor.GetSizeInBytes() > 0;
  const void* pointer =
      hasBytes
          ? reinterpret_cast<const void*>(static_cast<intptr_t>(tensor.descriptor.GetPointer()))
          : nullptr;
  detail::CheckExportDevice(where, space, tensor.device.device_type != 0, &device, pointer,
                            options.verify_device, zeContext, zeDevice);
  return device;
}

}  // namespace

namespace detail {

namespace {
// Frees the thread's spare export block when the thread ends (see LT-8); a block given back
// later on this thread (a deleter run by another thread_local's destructor) is freed at once.
struct SpareCleaner {
  ~SpareCleaner() {
    SpareSlot& spare = *ThisThreadSpare();
    spare.ended = true;
    std::free(spare.block);
    spare.block = nullptr;
  }
};
}  // namespace

void KeepSpareCleaner() noexcept {
  static thread_local SpareCleaner cleaner;
  (void)&cleaner;  // constructed here, once per thread, and destroyed when the thread ends
  ThisThreadSpare()->cleaner = true;
}

void FailExportBlock(const char* where, const char* what) {
  Fail(ErrorCode::kOutOfMemory, std::string(where) + ": could not " + what + " the export block");
}

namespace {

// The device a host descriptor exports as by default (the device map's row for it), read once
// at load. Null until then (an export from another library's static initialiser): the fast
// path then declines.
const DeviceTypeInfo* const kHostDefaultRow = FindDeviceType(DefaultDeviceType(MemorySpace::kHost));

// The full sequence, out of line: everything the fast path does not prove, and every error.
[[gnu::noinline]] ExportFacts CheckExportFully(const char* where, const Tensor& tensor,
                                               const ExportOptions& options, bool legacy);

}  // namespace

namespace {

// The checks of both exports, inline in ToDLPack*: the common export (issue 17) is recognised by
// the rules' own predicates (RecogniseExport), anything else checked fully out of line.
[[gnu::always_inline]] inline ExportFacts CheckExportInline(const char* where, const Tensor& tensor,
                                                            const ExportOptions& options,
                                                            bool legacy) {
  ExportFacts facts;
  if (FastPathsOn() && RecogniseExport(tensor, legacy, options, kHostDefaultRow, &facts)) {
    return facts;
  }
  return CheckExportFully(where, tensor, options, legacy);
}

}  // namespace

ExportFacts CheckExport(const char* where, const Tensor& tensor, const ExportOptions& options,
                        bool legacy) {
  return CheckExportInline(where, tensor, options, legacy);
}

namespace {

ExportFacts CheckExportFully(const char* where, const Tensor& tensor, const ExportOptions& options,
                             bool legacy) {
  const MemoryDescriptor& descriptor = tensor.descriptor;
  const TensorLayout& layout = tensor.layout;
  CheckMemorySpace(where, descriptor.GetMemorySpaceKind());  // see MD-15
  CheckHold(where, descriptor.HasOwnership(), options.allow_unowned);
  CheckFlagsOrThrow(where, tensor.flags, "the tensor's flag word");  // see EXP-13
  const uint64_t flags = PublishedFlags(tensor.flags, options.read_only);
  CheckLegacyFlags(where, legacy, flags);
  CheckDtypeOrThrow(where, layout.Dtype());  // see EXP-13
  CheckLegacyDtype(where, legacy, layout.Dtype(), flags);
  ExportFacts facts;
  facts.flags = flags;
  facts.device = ResolveDevice(where, tensor, options);
  const ByteSpan span = ComputeSpanOrThrow(where, layout.Dtype(), flags, layout.Ndim(),
                                           layout.Shape().data, layout.Strides().data);
  if (span.count > 0) {  // EXP-6: data and byte_offset only for a tensor with elements
    const int64_t start =
        CheckInsideBuffer(where, layout.ByteOffset(), span, descriptor.GetSizeInBytes());
    const uintptr_t pointer = static_cast<uintptr_t>(descriptor.GetPointer());
    const bool arithmetic = FindDeviceType(facts.device.device_type)->address_arithmetic;
    if (arithmetic) {
      // EXP-18: import's address rule (see IMP-10) on the same bytes, so that what export accepts
      // the import of it accepts too (an address at or past 2^63 is refused by both).
      const ThrowSink sink(where);
      uintptr_t first = 0;
      CheckAddress(sink, pointer, layout.ByteOffset(), start, span, &first,
                   "the descriptor's pointer");
    }
    PlaceElementZero(pointer, layout.ByteOffset(), arithmetic, options.keep_byte_offset,
                     &facts.data, &facts.byte_offset);  // see EXP-17
  }
  return facts;
}

}  // namespace
}  // namespace detail

namespace {

template <class Managed>
[[gnu::always_inline]] inline Managed* Export(const char* where, Tensor& tensor,
                                              const ExportOptions& options) {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  MemoryDescriptor& descriptor = tensor.descriptor;
  if (descriptor.GetRelease() == detail::kImportRelease<Managed> &&
      descriptor.GetReleaseContext() != nullptr) {
    auto* original = static_cast<Managed*>(descriptor.GetReleaseContext());
    // RT-2: the original, no allocation (checked before the export checks: the original passed
    // import's, and nothing about it changed).
    if (detail::IsUnchangedImport(tensor, *original, options, where)) {
      detail::DescriptorAccess::Disarm(descriptor);
      return original;
    }
  }
  // RT-3, RT-4: a changed import, or one whose original has no strides, is wrapped below (its
  // release context is the original, whose deleter runs when the new export's does).

  // Prepare, then emit with the tensor's hold moved in (what ExportPlan does with a
  // keep-alive of the caller's).
  const detail::ExportFacts facts = detail::CheckExportInline(where, tensor, options, kLegacy);
  // LT-6: the one allocation of the export.
  const detail::ExportMemory memory =
      detail::AllocateExport<Managed>(where, tensor.layout.Ndim(), ExportAllocator{});
  // EXP-11: nothing below can fail; the hold moves only once the export is certain.
  if (detail::DescriptorAccess::HoldsOwner(descriptor)) {  // EXP-2: the block keeps the owner
    std::shared_ptr<const void> owner = detail::DescriptorAccess::TakeOwner(descriptor);
    return detail::FillExport<Managed>(memory, facts, tensor.layout, KeepAlive{}, &owner,
                                       ExportAllocator{});
  }
  // EXP-1: a release hold moves in, manager_ctx its context; with no hold (allowed:
  // see EXP-3) there is no keep-alive.
  const KeepAlive keepAlive{descriptor.GetRelease(), descriptor.GetReleaseContext()};
  if (keepAlive.release != nullptr) detail::DescriptorAccess::Disarm(descriptor);
  return detail::FillExport<Managed>(memory, facts, tensor.layout, keepAlive, nullptr,
                                     ExportAllocator{});
}

// The options of the one-argument exports: known here, so their checks fold away.
constexpr ExportOptions kDefaultOptions{};

}  // namespace

DLManagedTensorVersioned* ToDLPackVersioned(Tensor&& tensor, const ExportOptions& options) {
  return Export<DLManagedTensorVersioned>("ToDLPackVersioned", tensor, options);
}

DLManagedTensor* ToDLPack(Tensor&& tensor, const ExportOptions& options) {
  return Export<DLManagedTensor>("ToDLPack", tensor, options);
}

DLManagedTensorVersioned* ToDLPackVersioned(Tensor&& tensor) {
  return Export<DLManagedTensorVersioned>("ToDLPackVersioned", tensor, kDefaultOptions);
}

DLManagedTensor* ToDLPack(Tensor&& tensor) {
  return Export<DLManagedTensor>("ToDLPack", tensor, kDefaultOptions);
}

}  // namespace dlbridge
