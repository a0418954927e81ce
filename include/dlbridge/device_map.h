/// @file
/// How memory spaces map to DLPack device types, both ways. Every answer comes from the two
/// tables in src/devices/device_map.cpp (one row per memory space, one per DLPack device type),
/// which hold every per-device fact as a column; spec/device-map.md gives the reason for each row.
#pragma once

#include <cstdint>
#include <string>

#include "dlbridge/device_verification.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/memory_space.h"

namespace dlbridge {

/// What importing a DLPack device type leads to.
enum class DeviceImport : int {
  kSpace = 0,          ///< Maps straight to DeviceTypeInfo::space.
  kNeedsContext = 1,   ///< kDLOneAPI: level_zero, only with a Level Zero context.
  kNeedsResolver = 2,  ///< kDLMetal: data is an id<MTLBuffer>; resolved to host memory.
  kRejected = 3,       ///< No memory space can describe it.
};

/// The stream convention of the Python DLPack protocol (`__dlpack__(stream=...)`) that a
/// device type follows: which stream values it accepts, and whether dlbridge orders streams.
enum class StreamFamily : int {
  kNone = 0,         ///< No streams: the protocol forbids a stream (kDLCPU).
  kCuda = 1,         ///< CUDA's: kDLCUDA, kDLCUDAHost, kDLCUDAManaged (one device's streams).
  kRocm = 2,         ///< ROCm's: kDLROCM, kDLROCMHost.
  kUnspecified = 3,  ///< DLPack defines none (every other type, and unknown values).
};

/// Who allocates the result of a copy (CopyTo) made to a device type: the device table's
/// copy_allocator column.
enum class CopyAllocator : int {
  kNone = 0,     ///< Not a copy target.
  kHost = 1,     ///< Host memory dlbridge allocates (AllocateHostTensor): kDLCPU.
  kRuntime = 2,  ///< The type's GPU runtime (DeviceTypeInfo::runtime): device memory.
};

/// Whether dlbridge orders streams of `family` (CUDA and ROCm: OrderStreams, the Python
/// module's stream arguments); the other families have no stream it could wait on.
constexpr bool OrdersStreams(StreamFamily family) noexcept {
  return family == StreamFamily::kCuda || family == StreamFamily::kRocm;
}

/// One row of the device table: every fact dlbridge knows about one DLPack device type.
struct DeviceTypeInfo {
  int32_t device_type;  ///< The DLDeviceType value.
  const char* name;     ///< Its enumerator name, e.g. "kDLCUDAHost".
  DeviceImport import;  ///< What FromDLPack does with it.
  MemorySpace space;    ///< The space it imports as (kSpace, kNeedsContext, kNeedsResolver).
  bool exported;        ///< Whether a descriptor of `space` may export with this type.
  /// The device-id rule: true for CPU-like types whose device_id is always 0; false for
  /// types whose device_id is a device ordinal (>= 0).
  bool id_is_zero;
  /// Whether `data` is a host address the CPU may read as it is: the types that import as
  /// "host" (kDLCPU, kDLCUDAHost, kDLROCMHost).
  bool host_addressable;
  /// Whether a GPU runtime owns the type's pointers and can verify them (`runtime`): the
  /// types of the GPU spaces (kDLCUDA, kDLCUDAManaged, kDLROCM, kDLOneAPI).
  bool has_runtime;
  /// The GPU runtime that owns the type; meaningful only when has_runtime is true.
  GpuRuntime runtime;
  /// The device type of the runtime's pinned host memory (kDLCUDAHost for CUDA, kDLROCMHost
  /// for ROCm); 0 where the runtime has none (Level Zero: host USM stays kDLOneAPI) or the
  /// type has no runtime.
  int32_t pinned_host_type;
  const char* reason;  ///< Why the row is what it is (used in error messages).
  /// Whether `data` is an address that byte arithmetic may move (element zero's address is
  /// `data + byte_offset`): every type an export emits (CPU, CUDA, CUDA host and managed,
  /// ROCm, ROCm host, oneAPI USM); false for handles (Metal, OpenCL, Vulkan, WebGPU) and for
  /// types no space describes. Export puts element zero in `data` only for these.
  bool address_arithmetic;
  /// The protocol's stream convention for the type (StreamFamily).
  StreamFamily stream_family;
  /// Whether the CPU may read and write the memory at its own address, as it is: the
  /// host-addressable types and unified memory (kDLCUDAManaged: one address on both sides),
  /// which an export or import may relabel (kDLCPU, 0) without a copy.
  bool host_accessible;
  /// Copies (CopyTo, spec/copies.md): who allocates a copy made to this type (kNone: it is no
  /// copy target).
  CopyAllocator copy_allocator;
  /// Whether a runtime copies this type's memory and waits for its streams (copy_runtime): the
  /// GPU types and the host-readable types of a stream family (pinned, managed memory).
  bool has_copy_runtime;
  /// That runtime (read only when has_copy_runtime).
  GpuRuntime copy_runtime;
  /// The stream a copy (or a Python consumer) uses on this type when none is given, as a
  /// Python DLPack stream value: CUDA's legacy default stream 1, ROCm's null stream 0; -1 for
  /// the types whose streams dlbridge does not order.
  int64_t default_stream;
};

/// The row for a device type, or nullptr when this build does not know the value.
DLBRIDGE_API const DeviceTypeInfo* FindDeviceType(int32_t device_type) noexcept;

/// The enumerator name of a device type, or "unknown" for values this build does not know.
DLBRIDGE_API const char* DeviceTypeName(int32_t device_type) noexcept;

/// The device type a space exports as when the caller names none (kDLCPU, kDLCUDA,
/// kDLROCM, kDLOneAPI).
DLBRIDGE_API DLDeviceType DefaultDeviceType(MemorySpace space) noexcept;

/// Whether a tensor of `space` may be exported with `device_type` (e.g. host with
/// kDLCUDAHost, cuda with kDLCUDAManaged).
DLBRIDGE_API bool DeviceTypeMatchesSpace(int32_t device_type, MemorySpace space) noexcept;

/// The enumerator names of the device types whose row `pick` accepts, in DLDeviceType order and
/// comma-separated, e.g. "kDLCPU, kDLCUDAHost, kDLROCMHost" for `host_addressable`: messages
/// that list the types a rule accepts build the list from the table, so it cannot drift.
DLBRIDGE_API std::string DeviceTypeNames(bool (*pick)(const DeviceTypeInfo& row));

/// The stream convention of a device type (its stream_family column); kUnspecified for
/// values this build does not know.
DLBRIDGE_API StreamFamily StreamFamilyOf(int32_t device_type) noexcept;

/// Whether the CPU may use memory of `device_type` at its own address (its host_accessible
/// column); false for values this build does not know.
DLBRIDGE_API bool IsHostAccessible(int32_t device_type) noexcept;

/// Every row, in DLDeviceType order, for tests and documentation.
DLBRIDGE_API const DeviceTypeInfo* DeviceTable(int* count) noexcept;

}  // namespace dlbridge
