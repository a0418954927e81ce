// Import: DLManagedTensorVersioned / DLManagedTensor -> Tensor, validated before use.
#include "dlbridge/from_dlpack.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "descriptor_access_internal.h"
#include "device_check_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "layout_internal.h"

namespace dlbridge {
namespace detail {

void ReleaseImportedVersioned(void* managed) noexcept {
  auto* m = static_cast<DLManagedTensorVersioned*>(managed);
  m->deleter(m);
}

void ReleaseImportedLegacy(void* managed) noexcept {
  auto* m = static_cast<DLManagedTensor*>(managed);
  m->deleter(m);
}

}  // namespace detail

namespace {

using detail::Fail;

// Calls the deleter exactly once if the import does not complete.
template <class Managed>
struct ConsumeOnFailure {
  Managed* managed;
  ~ConsumeOnFailure() {
    if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
  }
};

std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

template <class Managed>
Tensor Import(const char* where, Managed* managed, const ImportOptions& options) {
  constexpr bool kLegacy = std::is_same_v<Managed, DLManagedTensor>;
  if (managed == nullptr) {
    Fail(ErrorCode::kInvalidArgument, std::string(where) + ": the managed tensor is null");
  }
  ConsumeOnFailure<Managed> guard{managed};

  uint64_t flags = 0;
  bool nullStridesAllowed = true;
  if constexpr (!kLegacy) {
    // A different major version may lay out everything after `flags` differently.
    if (managed->version.major != 1) {
      Fail(ErrorCode::kUnsupportedVersion,
           std::string(where) + ": DLPack version " + std::to_string(managed->version.major) + "." +
               std::to_string(managed->version.minor) + " is not supported; accepted: 1.x");
    }
    flags = managed->flags;
    const uint64_t unknown = flags & ~detail::KnownFlags();
    if (unknown != 0) {
      Fail(ErrorCode::kInvalidFlags, std::string(where) + ": flags has bits " + Hex(unknown) +
                                         " that DLPack " + std::to_string(DLPACK_MAJOR_VERSION) +
                                         "." + std::to_string(DLPACK_MINOR_VERSION) +
                                         " does not define; known: " + Hex(detail::KnownFlags()));
    }
    nullStridesAllowed = managed->version.minor < 2 || options.allow_null_strides;
  } else {
    if (options.legacy_read_only) flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  }

  const DLTensor& t = managed->dl_tensor;
  if (t.ndim < 0 || t.ndim > TensorLayout::kMaxDims) {
    Fail(ErrorCode::kInvalidShape, std::string(where) + ": ndim is " + std::to_string(t.ndim) +
                                       "; accepted: 0.." + std::to_string(TensorLayout::kMaxDims));
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    Fail(ErrorCode::kInvalidShape,
         std::string(where) + ": shape is NULL with ndim " + std::to_string(t.ndim));
  }
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      Fail(ErrorCode::kInvalidShape, std::string(where) + ": shape[" + std::to_string(i) + "] is " +
                                         std::to_string(t.shape[i]) + "; extents must be >= 0");
    }
  }
  if (t.ndim > 0 && t.strides == nullptr && !nullStridesAllowed) {
    Fail(ErrorCode::kInvalidStrides,
         std::string(where) + ": strides is NULL with ndim " + std::to_string(t.ndim) +
             "; DLPack >= 1.2 requires strides (ImportOptions::allow_null_strides relaxes this)");
  }
  detail::CheckDtype(where, t.dtype);

  const DeviceTypeInfo* row = FindDeviceType(static_cast<int32_t>(t.device.device_type));
  if (row == nullptr) {
    Fail(ErrorCode::kUnsupportedDevice,
         std::string(where) + ": device_type " + std::to_string(t.device.device_type) +
             " is unknown to this build; accepted: kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, "
             "kDLROCMHost, kDLCUDAManaged, kDLOneAPI (with a context), kDLMetal (with a resolver)");
  }
  if (row->import == DeviceImport::kRejected) {
    Fail(ErrorCode::kUnsupportedDevice, std::string(where) + ": device_type " +
                                            std::to_string(row->device_type) + " (" + row->name +
                                            ") is not supported: " + row->reason);
  }
  void* zeContext = nullptr;
  void* zeDevice = nullptr;
  detail::LevelZeroHandles(options.level_zero_context, nullptr, &zeContext, &zeDevice);
  if (row->import == DeviceImport::kNeedsContext && zeContext == nullptr) {
    Fail(ErrorCode::kMissingContext,
         std::string(where) + ": device_type " + row->name +
             " needs ImportOptions::level_zero_context (or SetLevelZeroContext): a Level Zero "
             "pointer means nothing without the context it was allocated from");
  }
  const MetalResolver* resolver = nullptr;
  if (row->import == DeviceImport::kNeedsResolver) {
    resolver = options.metal_resolver ? options.metal_resolver : GetMetalResolver();
    if (resolver == nullptr) {
      Fail(ErrorCode::kMissingContext,
           std::string(where) +
               ": device_type kDLMetal holds an id<MTLBuffer>, not an address; "
               "register a MetalResolver (SetMetalResolver or ImportOptions)");
    }
  }
  if (!row->id_is_zero && t.device.device_id < 0) {
    Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": device_id is " +
                                         std::to_string(t.device.device_id) + " for " + row->name +
                                         "; accepted: >= 0");
  }
  if (options.require_writable && (flags & DLPACK_FLAG_BITMASK_READ_ONLY)) {
    Fail(ErrorCode::kReadOnly,
         std::string(where) +
             ": the tensor is read-only and ImportOptions::require_writable is set");
  }

  Tensor result;
  detail::LayoutAccess::Assign(result.layout, t.dtype, t.ndim, t.shape, t.strides);
  const detail::ByteSpan span = detail::ComputeSpan(
      where, t.dtype, flags, t.ndim, result.layout.Shape().data, result.layout.Strides().data);
  result.device = t.device;
  if (row->id_is_zero) result.device.device_id = 0;
  if (resolver != nullptr) result.device = DLDevice{kDLCPU, 0};  // a host address once resolved
  result.flags = flags;

  if (span.count > 0) {
    uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
    if (t.data == nullptr) {
      Fail(ErrorCode::kNullData, std::string(where) + ": data is NULL but the tensor has " +
                                     std::to_string(span.count) + " elements");
    }
    if (t.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      Fail(ErrorCode::kOverflow, std::string(where) + ": byte_offset " +
                                     std::to_string(t.byte_offset) + " overflows int64");
    }
    int64_t start = 0;
    if (detail::AddOverflows(static_cast<int64_t>(t.byte_offset), span.low, &start)) {
      Fail(ErrorCode::kOverflow,
           std::string(where) + ": byte_offset plus the layout overflows int64");
    }
    if (resolver != nullptr) {
      MetalBufferInfo info;
      if (!resolver->Resolve(t.data, info)) {
        Fail(ErrorCode::kInvalidArgument,
             std::string(where) + ": the MetalResolver does not know buffer " + Hex(base));
      }
      if (info.storage != MetalStorageMode::kShared || info.contents == nullptr) {
        Fail(ErrorCode::kUnsupportedDevice,
             std::string(where) + ": Metal buffer " + Hex(base) + " has " +
                 (info.storage == MetalStorageMode::kPrivate      ? "private"
                  : info.storage == MetalStorageMode::kMemoryless ? "memoryless"
                  : info.storage == MetalStorageMode::kManaged    ? "managed"
                                                                  : "shared (no contents)") +
                 " storage; only shared storage has a host pointer that can be described");
      }
      int64_t end = 0;
      if (start < 0 || detail::AddOverflows(start, span.bytes, &end) ||
          static_cast<uint64_t>(end) > info.length) {
        Fail(ErrorCode::kOutOfBounds, std::string(where) + ": the tensor reaches past the " +
                                          std::to_string(info.length) + "-byte Metal buffer");
      }
      base = reinterpret_cast<uintptr_t>(info.contents);
    }
    const uintptr_t pointer = base + static_cast<uintptr_t>(start);
    const bool wraps = start < 0 ? pointer > base : pointer < base;
    if (wraps || pointer == 0 || pointer + static_cast<uintptr_t>(span.bytes) < pointer ||
        pointer > static_cast<uintptr_t>(std::numeric_limits<int64_t>::max())) {
      Fail(ErrorCode::kOverflow, std::string(where) + ": data " + Hex(base) + " with byte_offset " +
                                     std::to_string(t.byte_offset) +
                                     " and this layout wraps around the address space");
    }
    if (resolver == nullptr && row->space != MemorySpace::kHost) {
      // GPU-5: the pointer's runtime must agree with the device (unless verification is off).
      detail::CheckImportDevice(where, t.device, reinterpret_cast<const void*>(pointer),
                                options.verify_device, zeContext);
    }
    detail::DescriptorAccess::Describe(result.descriptor, static_cast<int64_t>(pointer), span.bytes,
                                       row->space);
    result.layout.SetByteOffset(static_cast<uint64_t>(-span.low));
  } else {
    result.descriptor.SetMemorySpace(row->space);
  }
  if (managed->deleter != nullptr) {
    constexpr ReleaseFunction kRelease =
        kLegacy ? &detail::ReleaseImportedLegacy : &detail::ReleaseImportedVersioned;
    result.descriptor.SetRelease(kRelease, managed);
  }
  guard.managed = nullptr;
  return result;
}

}  // namespace

Tensor FromDLPack(DLManagedTensorVersioned* managed, const ImportOptions& options) {
  return Import("FromDLPack(DLManagedTensorVersioned*)", managed, options);
}

Tensor FromDLPack(DLManagedTensor* managed, const ImportOptions& options) {
  return Import("FromDLPack(DLManagedTensor*)", managed, options);
}

}  // namespace dlbridge
