// The device tables: one row per memory space and one per DLPack device type, each fact a
// column, and their lookups (include/dlbridge/device_map.h, src/devices/device_map_internal.h).
// Verification of GPU pointers is src/devices/device_check.cpp's; space names are
// src/core/memory_space.cpp's.
#include "dlbridge/device_map.h"

#include <string>

#include "core/memory_space_internal.h"
#include "devices/device_map_internal.h"

namespace dlbridge {
namespace {

// The device type each space exports as when the caller names none (DEV-2: every space has
// one; its names are src/core/memory_space.cpp's).
struct SpaceRow {
  MemorySpace space;
  DLDeviceType default_type;
};

constexpr SpaceRow kSpaces[] = {
    {MemorySpace::kHost, kDLCPU},
    {MemorySpace::kCuda, kDLCUDA},
    {MemorySpace::kHip, kDLROCM},
    {MemorySpace::kLevelZero, kDLOneAPI},
};

// The runtime columns of a row: whether a GPU runtime owns the type, which, and that
// runtime's pinned-host device type.
struct Owner {
  bool has_runtime;
  GpuRuntime runtime;
  int32_t pinned_host_type;
};
constexpr Owner kNoRuntime{false, GpuRuntime::kCuda, 0};
constexpr Owner kCuda{true, GpuRuntime::kCuda, 3};            // pinned host: kDLCUDAHost
constexpr Owner kRocm{true, GpuRuntime::kHip, 11};            // pinned host: kDLROCMHost
constexpr Owner kLevelZero{true, GpuRuntime::kLevelZero, 0};  // host USM stays kDLOneAPI

// A row, its fields set by name (so that the table does not depend on the struct's order).
// The copy columns (CopyTo): who allocates a copy to the type, the runtime that copies its
// memory and waits for its streams, the default stream of its family.
struct Copies {
  CopyAllocator allocator;
  bool has_runtime;
  GpuRuntime runtime;
  int64_t default_stream;
};
constexpr Copies kNoCopies{CopyAllocator::kNone, false, GpuRuntime::kCuda, -1};
constexpr Copies kHostCopies{CopyAllocator::kHost, false, GpuRuntime::kCuda, -1};
constexpr Copies kCudaCopies{CopyAllocator::kRuntime, true, GpuRuntime::kCuda, 1};
constexpr Copies kCudaReadCopies{CopyAllocator::kNone, true, GpuRuntime::kCuda, 1};  // read by host
constexpr Copies kRocmCopies{CopyAllocator::kRuntime, true, GpuRuntime::kHip, 0};
constexpr Copies kRocmReadCopies{CopyAllocator::kNone, true, GpuRuntime::kHip, 0};  // read by host
constexpr Copies kLevelZeroCopies{CopyAllocator::kRuntime, true, GpuRuntime::kLevelZero, -1};

constexpr DeviceTypeInfo Row(int32_t type, const char* name, DeviceImport import, MemorySpace space,
                             bool exported, bool id_is_zero, bool host_addressable,
                             bool host_accessible, StreamFamily streams, Owner owner, Copies copies,
                             const char* reason, bool address_arithmetic = true) {
  DeviceTypeInfo row{};
  row.device_type = type;
  row.name = name;
  row.import = import;
  row.space = space;
  row.exported = exported;
  row.id_is_zero = id_is_zero;
  row.host_addressable = host_addressable;
  row.host_accessible = host_accessible;
  row.stream_family = streams;
  row.has_runtime = owner.has_runtime;
  row.runtime = owner.runtime;
  row.pinned_host_type = owner.pinned_host_type;
  row.reason = reason;
  row.address_arithmetic = address_arithmetic;
  row.copy_allocator = copies.allocator;
  row.has_copy_runtime = copies.has_runtime;
  row.copy_runtime = copies.runtime;
  row.default_stream = copies.default_stream;
  return row;
}

// A type no memory space describes: imports as nothing, exports as nothing.
constexpr DeviceTypeInfo Rejected(int32_t type, const char* name, const char* reason) {
  return Row(type, name, DeviceImport::kRejected, MemorySpace::kHost, false, false, false, false,
             StreamFamily::kUnspecified, kNoRuntime, kNoCopies, reason, false);
}

constexpr MemorySpace H = MemorySpace::kHost;
constexpr DeviceImport kSpace = DeviceImport::kSpace;
// The stream families (the Python protocol's conventions), short for the table.
constexpr StreamFamily kNoStreams = StreamFamily::kNone;
constexpr StreamFamily kCudaStreams = StreamFamily::kCuda;
constexpr StreamFamily kRocmStreams = StreamFamily::kRocm;
constexpr StreamFamily kNoConvention = StreamFamily::kUnspecified;

// Device types are written as numbers so that this table compiles against any 1.x header;
// values a header does not have are still listed and decided here. Columns: value, name,
// import, space, exported, id_is_zero, host_addressable, host_accessible, stream_family,
// runtime (Owner), the copy columns (Copies), reason, and
// address_arithmetic (true unless given: false for handles and rejected types). DEV-4: one row
// per type (TablesAgree) with one space, so no type exports from two; kDLMetal's `exported`
// is false.
constexpr DeviceTypeInfo kDevices[] = {
    Row(1, "kDLCPU", kSpace, H, true, true, true, true, kNoStreams, kNoRuntime, kHostCopies,
        "CPU memory is host memory"),
    Row(2, "kDLCUDA", kSpace, MemorySpace::kCuda, true, false, false, false, kCudaStreams, kCuda,
        kCudaCopies, "CUDA device memory"),
    Row(3, "kDLCUDAHost", kSpace, H, true, true, true, true, kCudaStreams, kNoRuntime,
        kCudaReadCopies, "CUDA pinned host memory is host-addressable"),
    Rejected(4, "kDLOpenCL",
             "OpenCL data is a cl_mem handle, not an address; no memory space describes it"),
    Rejected(7, "kDLVulkan",
             "Vulkan data is a buffer handle, not an address; no memory space describes it"),
    Row(8, "kDLMetal", DeviceImport::kNeedsResolver, H, false, false, false, false, kNoConvention,
        kNoRuntime, kNoCopies,
        "Metal data is an id<MTLBuffer> handle; only a registered MetalResolver can turn "
        "shared storage into a host pointer",
        false),
    Rejected(9, "kDLVPI", "Verilog simulator memory has no memory space"),
    Row(10, "kDLROCM", kSpace, MemorySpace::kHip, true, false, false, false, kRocmStreams, kRocm,
        kRocmCopies, "ROCm device memory is HIP memory"),
    Row(11, "kDLROCMHost", kSpace, H, true, true, true, true, kRocmStreams, kNoRuntime,
        kRocmReadCopies, "ROCm pinned host memory is host-addressable"),
    Rejected(12, "kDLExtDev", "reserved extension device: its data has no agreed meaning"),
    Row(13, "kDLCUDAManaged", kSpace, MemorySpace::kCuda, true, true, false, true, kCudaStreams,
        kCuda, kCudaReadCopies,
        "CUDA managed memory is addressed as CUDA memory; DLPack fixes its device_id at 0"),
    Row(14, "kDLOneAPI", DeviceImport::kNeedsContext, MemorySpace::kLevelZero, true, false, false,
        false, kNoConvention, kLevelZero, kLevelZeroCopies,
        "oneAPI pointers are Level Zero USM pointers, meaningful only with their ze_context"),
    Rejected(15, "kDLWebGPU", "WebGPU data is a GPUBuffer handle; no memory space describes it"),
    Rejected(16, "kDLHexagon", "Qualcomm Hexagon DSP memory has no memory space"),
    Rejected(17, "kDLMAIA", "Microsoft MAIA memory has no memory space"),
    Rejected(18, "kDLTrn", "AWS Trainium memory has no memory space"),
};
constexpr int kDeviceCount = static_cast<int>(sizeof(kDevices) / sizeof(kDevices[0]));

// Row index for each device type value (-1: not in the table), so lookups on every export
// and import are a direct index rather than a search of the table.
constexpr int32_t kMaxDeviceType = 31;
struct DeviceIndex {
  int8_t row[kMaxDeviceType + 1];
};
constexpr DeviceIndex MakeDeviceIndex() {
  DeviceIndex index{};
  for (int32_t v = 0; v <= kMaxDeviceType; ++v) index.row[v] = -1;
  for (int i = 0; i < kDeviceCount; ++i)
    index.row[kDevices[i].device_type] = static_cast<int8_t>(i);
  return index;
}
constexpr DeviceIndex kDeviceIndex = MakeDeviceIndex();

constexpr const DeviceTypeInfo* Lookup(int32_t device_type) {
  if (device_type < 0 || device_type > kMaxDeviceType) return nullptr;
  const int8_t row = kDeviceIndex.row[device_type];
  return row < 0 ? nullptr : &kDevices[row];
}

// The columns agree with one another: a GPU runtime owns exactly the types of the GPU spaces,
// one runtime per space; host-addressable types import as "host"; a pinned-host type is a
// host-addressable row with its runtime's streams; each space's default type exports as that
// space.
constexpr bool TablesAgree() {
  for (int i = 0; i < kDeviceCount; ++i) {
    const DeviceTypeInfo& row = kDevices[i];
    if (row.has_runtime != (row.space != MemorySpace::kHost)) return false;
    if (row.host_addressable && (row.space != MemorySpace::kHost || row.import != kSpace))
      return false;
    if (row.host_addressable && !row.address_arithmetic) return false;
    // What the CPU reads as it is, it may also read at its own address.
    if (row.host_addressable && !row.host_accessible) return false;
    if (row.host_accessible && !row.address_arithmetic) return false;
    // A runtime's streams are ordered only through that runtime: a type that has one has its
    // streams, and its pinned-host type shares them.
    if (row.has_runtime && row.runtime == GpuRuntime::kCuda && row.stream_family != kCudaStreams)
      return false;
    if (row.has_runtime && row.runtime == GpuRuntime::kHip && row.stream_family != kRocmStreams)
      return false;
    if (row.pinned_host_type != 0) {
      const DeviceTypeInfo* pinned = Lookup(row.pinned_host_type);
      if (pinned == nullptr || !pinned->host_addressable || !row.has_runtime) return false;
      if (pinned->stream_family != row.stream_family) return false;
    }
    // The copy columns: the host allocates only host memory of device 0; a runtime allocates
    // only its own device memory; a type with a runtime is copied by it, and a stream family
    // by its runtime, from its default stream (see DEV-6).
    if (row.copy_allocator == CopyAllocator::kHost &&
        (!row.host_addressable || !row.id_is_zero || row.stream_family != kNoStreams))
      return false;
    if (row.copy_allocator == CopyAllocator::kRuntime &&
        (!row.has_runtime || row.host_accessible || !row.exported))
      return false;
    if (row.has_runtime && (!row.has_copy_runtime || row.copy_runtime != row.runtime)) return false;
    if (row.stream_family == kCudaStreams &&
        (!row.has_copy_runtime || row.copy_runtime != GpuRuntime::kCuda || row.default_stream != 1))
      return false;
    if (row.stream_family == kRocmStreams &&
        (!row.has_copy_runtime || row.copy_runtime != GpuRuntime::kHip || row.default_stream != 0))
      return false;
    if (!OrdersStreams(row.stream_family) && row.default_stream != -1) return false;
    for (int k = 0; k < kDeviceCount; ++k) {
      const DeviceTypeInfo& other = kDevices[k];
      if (k != i && other.device_type == row.device_type) return false;
      if (row.has_runtime && other.space == row.space && other.runtime != row.runtime) return false;
    }
  }
  for (const SpaceRow& space : kSpaces) {
    const DeviceTypeInfo* row = Lookup(space.default_type);
    if (row == nullptr || !row->exported || row->space != space.space) return false;
  }
  return true;
}
static_assert(TablesAgree(), "the device table's columns contradict one another");

bool HasRuntime(MemorySpace space) { return detail::SpaceRuntime(space, nullptr); }

// Appends the names of the rows `pick` accepts, each followed by `suffix`, to a
// comma-separated list.
template <class Pick>
void AppendNames(std::string* list, Pick&& pick, const char* suffix) {
  for (const DeviceTypeInfo& row : kDevices) {
    if (!pick(row)) continue;
    if (!list->empty()) *list += ", ";
    *list += std::string(row.name) + suffix;
  }
}

}  // namespace

namespace detail {
namespace {
static_assert(kDeviceTypeSlots == kMaxDeviceType + 1, "the inline index covers every type");
constexpr DeviceRowIndex MakeDeviceRowIndex() {
  DeviceRowIndex index{};
  for (int32_t v = 0; v < kDeviceTypeSlots; ++v) index.row[v] = Lookup(v);
  return index;
}
}  // namespace
// DeviceRow's index: FindDeviceType's answers, one per type value.
constexpr DeviceRowIndex kDeviceRowIndex = MakeDeviceRowIndex();
}  // namespace detail

// The public lookup reads the same index the converters read inline (detail::DeviceRow).
const DeviceTypeInfo* FindDeviceType(int32_t device_type) noexcept {
  return detail::DeviceRow(device_type);
}

// DEV-5: the stream family and host access, columns like every other device fact, so that the
// core's stream rules and the Python module read one answer.
StreamFamily StreamFamilyOf(int32_t device_type) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  return row != nullptr ? row->stream_family : StreamFamily::kUnspecified;
}

bool IsHostAccessible(int32_t device_type) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  return row != nullptr && row->host_accessible;
}

const char* DeviceTypeName(int32_t device_type) noexcept {
  const DeviceTypeInfo* row = FindDeviceType(device_type);
  return row ? row->name : "unknown";
}

DLDeviceType DefaultDeviceType(MemorySpace space) noexcept {
  for (const SpaceRow& row : kSpaces) {
    if (row.space == space) return row.default_type;
  }
  return kDLCPU;
}

bool DeviceTypeMatchesSpace(int32_t device_type, MemorySpace space) noexcept {
  return detail::TypeMatchesSpace(device_type, space);
}

// DEV-6: the lists messages name are the table's rows.
std::string DeviceTypeNames(bool (*pick)(const DeviceTypeInfo& row)) {
  std::string list;
  AppendNames(&list, pick, "");
  return list;
}

const DeviceTypeInfo* DeviceTable(int* count) noexcept {
  if (count) *count = kDeviceCount;
  return kDevices;
}

namespace detail {

bool SpaceRuntime(MemorySpace space, GpuRuntime* runtime) noexcept {
  const DeviceTypeInfo* row = nullptr;
  for (const SpaceRow& s : kSpaces) {
    if (s.space == space) row = Lookup(s.default_type);
  }
  if (row == nullptr || !row->has_runtime) return false;
  if (runtime != nullptr) *runtime = row->runtime;
  return true;
}

std::string AcceptedImportDeviceTypes() {
  struct Kind {
    DeviceImport import;
    const char* suffix;
  };
  constexpr Kind kKinds[] = {{DeviceImport::kSpace, ""},
                             {DeviceImport::kNeedsContext, " (with a context)"},
                             {DeviceImport::kNeedsResolver, " (with a resolver)"}};
  std::string list;
  for (const Kind& kind : kKinds) {
    AppendNames(
        &list, [&](const DeviceTypeInfo& row) { return row.import == kind.import; }, kind.suffix);
  }
  return list;
}

std::string GpuSpaceNames() { return SpaceNameList(&HasRuntime); }

}  // namespace detail
}  // namespace dlbridge
