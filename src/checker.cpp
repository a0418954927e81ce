// The conformance checker: reads a managed tensor, reports findings, consumes nothing.
// The dtype table, flag list, device table and layout arithmetic are the core's own
// (layout_internal.h, device_map.h), so the checker and the importer cannot drift apart.
#include "dlbridge/checker.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlbridge/tensor_layout.h"
#include "layout_internal.h"

namespace dlbridge {

namespace {

constexpr CheckerRule kRules[] = {
    {"CONF-NULL", Severity::kViolation, "the managed tensor pointer is not NULL"},
    {"CONF-VERSION-MAJOR", Severity::kViolation,
     "version.major is 1 (another major: a consumer may only call the deleter)"},
    {"CONF-VERSION-MINOR", Severity::kNote,
     "version.minor is at most the checker's header minor (newer: unknown values are warnings)"},
    {"CONF-DELETER-NULL", Severity::kNote,
     "the deleter is set (NULL is allowed, nothing is freed)"},
    {"CONF-FLAGS-UNKNOWN", Severity::kViolation, "flags holds only bits the header defines"},
    {"CONF-FLAGS-PADDED", Severity::kWarning,
     "IS_SUBBYTE_TYPE_PADDED is set only on a sub-byte dtype"},
    {"CONF-NDIM", Severity::kViolation, "ndim >= 0 (and at most 64, the checker's bound: warning)"},
    {"CONF-SHAPE-NULL", Severity::kViolation, "shape is not NULL when ndim > 0"},
    {"CONF-SHAPE-NEGATIVE", Severity::kViolation, "every extent is >= 0"},
    {"CONF-STRIDES-NULL", Severity::kViolation,
     "strides is not NULL when ndim > 0 for DLPack >= 1.2 (legacy and < 1.2: a note)"},
    {"CONF-DTYPE-CODE", Severity::kViolation, "dtype.code is a DLDataTypeCode value"},
    {"CONF-DTYPE-LANES", Severity::kViolation, "dtype.lanes >= 1"},
    {"CONF-DTYPE-BITS", Severity::kViolation, "dtype.bits matches dtype.code"},
    {"CONF-DEVICE-TYPE", Severity::kViolation, "device.device_type is a DLDeviceType value"},
    {"CONF-DEVICE-ID", Severity::kViolation,
     "device_id is 0 for CPU, pinned and managed memory, >= 0 otherwise"},
    {"CONF-DATA-NULL", Severity::kViolation, "data is not NULL when the tensor has elements"},
    {"CONF-DATA-ZERO-SIZE", Severity::kNote, "data is NULL when the tensor has no elements"},
    {"CONF-ALIGN", Severity::kNote, "data is aligned to 256 bytes (byte_offset locates element 0)"},
    {"CONF-OVERFLOW", Severity::kViolation,
     "extent, stride, byte size, byte_offset and address arithmetic fit int64 and do not wrap"},
    {"CONF-SUBBYTE-BOUNDARY", Severity::kViolation,
     "a packed sub-byte tensor's lowest element starts on a byte boundary"},
};

std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

class Report {
 public:
  void Add(const char* rule, Severity severity, std::string message) {
    findings_.push_back(Finding{rule, severity, std::move(message)});
  }
  std::vector<Finding> Take() { return std::move(findings_); }

 private:
  std::vector<Finding> findings_;
};

// Address-like device types (the ones dlbridge can describe); others hold handles.
bool IsAddress(const DeviceTypeInfo* row) { return row != nullptr && row->exported; }

// The checks on a DLTensor. `strict_strides`: DLPack >= 1.2 forbids NULL strides.
// `newer`: the producer's minor is newer than this build's header, so values unknown here
// may be legitimate: they are warnings, not violations.
void CheckTensor(const DLTensor& t, uint64_t flags, bool versioned, bool strict_strides, bool newer,
                 Report& report) {
  const Severity unknownSeverity = newer ? Severity::kWarning : Severity::kViolation;

  // dtype
  const DLDataType dtype = t.dtype;
  bool dtypeKnown = true;
  if (!detail::IsKnownDtypeCode(dtype.code)) {
    dtypeKnown = false;
    report.Add("CONF-DTYPE-CODE", unknownSeverity,
               "dtype.code " + std::to_string(dtype.code) + " is not a DLDataTypeCode of DLPack " +
                   std::to_string(DLPACK_MAJOR_VERSION) + "." +
                   std::to_string(DLPACK_MINOR_VERSION));
  }
  if (dtype.lanes == 0) {
    report.Add("CONF-DTYPE-LANES", Severity::kViolation, "dtype.lanes is 0; lanes must be >= 1");
  }
  if (dtypeKnown) {
    try {
      detail::CheckDtype("dtype", DLDataType{dtype.code, dtype.bits, 1});
    } catch (const Error& e) {
      report.Add("CONF-DTYPE-BITS", Severity::kViolation, e.what());
    }
  }
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  if ((flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) &&
      (int64_t{dtype.bits} * dtype.lanes) % 8 == 0) {
    report.Add("CONF-FLAGS-PADDED", Severity::kWarning,
               "IS_SUBBYTE_TYPE_PADDED is set on " + detail::DtypeText(dtype) +
                   ", which is not a sub-byte type");
  }
#endif

  // device
  const int32_t deviceType = static_cast<int32_t>(t.device.device_type);
  const DeviceTypeInfo* row = FindDeviceType(deviceType);
  if (row == nullptr) {
    report.Add("CONF-DEVICE-TYPE", unknownSeverity,
               "device_type " + std::to_string(deviceType) + " is not a DLDeviceType of DLPack " +
                   std::to_string(DLPACK_MAJOR_VERSION) + "." +
                   std::to_string(DLPACK_MINOR_VERSION));
  } else if (row->id_is_zero && t.device.device_id != 0) {
    report.Add("CONF-DEVICE-ID", Severity::kViolation,
               "device_id is " + std::to_string(t.device.device_id) + " for " + row->name +
                   "; the header sets it to 0 for CPU, pinned and managed memory");
  } else if (!row->id_is_zero && t.device.device_id < 0) {
    report.Add("CONF-DEVICE-ID", Severity::kViolation,
               "device_id is " + std::to_string(t.device.device_id) + " for " + row->name +
                   "; a device index is >= 0");
  }

  // shape and strides
  if (t.ndim < 0) {
    report.Add("CONF-NDIM", Severity::kViolation,
               "ndim is " + std::to_string(t.ndim) + "; it must be >= 0");
    return;
  }
  if (t.ndim > TensorLayout::kMaxDims) {
    report.Add("CONF-NDIM", Severity::kWarning,
               "ndim is " + std::to_string(t.ndim) + "; the checker reads at most " +
                   std::to_string(TensorLayout::kMaxDims) +
                   " dimensions, so shape, strides and "
                   "the layout are not checked");
    return;
  }
  if (t.ndim > 0 && t.shape == nullptr) {
    report.Add("CONF-SHAPE-NULL", Severity::kViolation,
               "shape is NULL with ndim " + std::to_string(t.ndim));
    return;
  }
  bool negative = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {
      negative = true;
      report.Add("CONF-SHAPE-NEGATIVE", Severity::kViolation,
                 "shape[" + std::to_string(i) + "] is " + std::to_string(t.shape[i]) +
                     "; extents must be >= 0");
    }
  }
  int64_t contiguous[TensorLayout::kMaxDims] = {};
  const int64_t* strides = t.strides;
  if (t.ndim > 0 && strides == nullptr) {
    if (strict_strides) {
      report.Add("CONF-STRIDES-NULL", Severity::kViolation,
                 "strides is NULL with ndim " + std::to_string(t.ndim) +
                     "; DLPack >= 1.2 requires strides");
    } else {
      report.Add("CONF-STRIDES-NULL", Severity::kNote,
                 std::string("strides is NULL with ndim ") + std::to_string(t.ndim) + " (" +
                     (versioned ? "allowed before DLPack 1.2" : "allowed for legacy tensors") +
                     ": C-contiguous)");
    }
  }
  if (negative) return;  // no layout arithmetic over negative extents

  int64_t count = 1;
  bool countOverflows = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (detail::MulOverflows(count, t.shape[i], &count)) countOverflows = true;
  }
  if (!countOverflows && strides == nullptr && t.ndim > 0) {
    int64_t step = 1;
    for (int32_t k = t.ndim - 1; k >= 0; --k) {
      contiguous[k] = step;
      if (t.shape[k] > 1 && detail::MulOverflows(step, t.shape[k], &step)) step = 0;
    }
    strides = contiguous;
  }
  detail::ByteSpan span;
  bool spanKnown = false;
  if (dtype.lanes != 0) {
    try {
      span = detail::ComputeSpan("layout", dtype, flags, t.ndim, t.shape, strides);
      spanKnown = true;
    } catch (const Error& e) {
      report.Add(e.code() == ErrorCode::kInvalidStrides ? "CONF-SUBBYTE-BOUNDARY" : "CONF-OVERFLOW",
                 Severity::kViolation, e.what());
    }
  } else if (countOverflows) {
    report.Add("CONF-OVERFLOW", Severity::kViolation, "layout: the element count overflows int64");
  }
  if (!spanKnown) return;

  // data
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  if (span.count == 0) {
    if (t.data != nullptr) {
      report.Add("CONF-DATA-ZERO-SIZE", Severity::kNote,
                 "data is " + Hex(base) +
                     " for a tensor with no elements; the header says it "
                     "should be NULL");
    }
    return;
  }
  if (t.data == nullptr) {
    report.Add("CONF-DATA-NULL", Severity::kViolation,
               "data is NULL but the tensor has " + std::to_string(span.count) + " elements");
    return;
  }
  if (!IsAddress(row)) return;  // handles (OpenCL, Vulkan, Metal, ...): no address arithmetic
  if (base % 256 != 0) {
    report.Add("CONF-ALIGN", Severity::kNote,
               "data " + Hex(base) + " is not 256-byte aligned (byte_offset " +
                   std::to_string(t.byte_offset) + ")");
  }
  if (t.byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    report.Add("CONF-OVERFLOW", Severity::kViolation,
               "byte_offset " + std::to_string(t.byte_offset) + " overflows int64");
    return;
  }
  int64_t start = 0;
  if (detail::AddOverflows(static_cast<int64_t>(t.byte_offset), span.low, &start)) {
    report.Add("CONF-OVERFLOW", Severity::kViolation,
               "byte_offset plus the layout overflows int64");
    return;
  }
  const uintptr_t pointer = base + static_cast<uintptr_t>(start);
  const bool wraps = start < 0 ? pointer > base : pointer < base;
  // Addresses are int64 in dlbridge (and in every framework's Python API): past INT64_MAX
  // counts as wrapping, as in FromDLPack.
  if (wraps || pointer == 0 || pointer + static_cast<uintptr_t>(span.bytes) < pointer ||
      pointer > static_cast<uintptr_t>(std::numeric_limits<int64_t>::max())) {
    report.Add("CONF-OVERFLOW", Severity::kViolation,
               "data " + Hex(base) + " with byte_offset " + std::to_string(t.byte_offset) +
                   " and this layout wraps around the address space");
  }
}

}  // namespace

const char* SeverityName(Severity severity) noexcept {
  switch (severity) {
    case Severity::kViolation: return "violation";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "unknown";
}

const CheckerRule* CheckerRules(int* count) noexcept {
  if (count != nullptr) *count = static_cast<int>(sizeof(kRules) / sizeof(kRules[0]));
  return kRules;
}

std::vector<Finding> CheckDLPack(const DLManagedTensorVersioned* managed) {
  Report report;
  if (managed == nullptr) {
    report.Add("CONF-NULL", Severity::kViolation, "the managed tensor pointer is NULL");
    return report.Take();
  }
  const DLPackVersion version = managed->version;
  if (version.major != 1) {
    // Everything after `flags` may be laid out differently: touch nothing else.
    report.Add("CONF-VERSION-MAJOR", Severity::kViolation,
               "version is " + std::to_string(version.major) + "." + std::to_string(version.minor) +
                   "; this checker reads 1.x (a consumer may only call the deleter)");
    return report.Take();
  }
  const bool newer = version.minor > DLPACK_MINOR_VERSION;
  if (newer) {
    report.Add("CONF-VERSION-MINOR", Severity::kNote,
               "version is 1." + std::to_string(version.minor) + ", newer than the checker's 1." +
                   std::to_string(DLPACK_MINOR_VERSION) + ": values it does not know are warnings");
  }
  if (managed->deleter == nullptr) {
    report.Add("CONF-DELETER-NULL", Severity::kNote,
               "deleter is NULL: the consumer cannot tell the producer it is done");
  }
  const uint64_t unknown = managed->flags & ~detail::KnownFlags();
  if (unknown != 0) {
    report.Add("CONF-FLAGS-UNKNOWN", newer ? Severity::kWarning : Severity::kViolation,
               "flags has bits " + Hex(unknown) + " that DLPack " +
                   std::to_string(DLPACK_MAJOR_VERSION) + "." +
                   std::to_string(DLPACK_MINOR_VERSION) + " does not define");
  }
  CheckTensor(managed->dl_tensor, managed->flags, true, version.minor >= 2, newer, report);
  return report.Take();
}

std::vector<Finding> CheckDLPack(const DLManagedTensor* managed) {
  Report report;
  if (managed == nullptr) {
    report.Add("CONF-NULL", Severity::kViolation, "the managed tensor pointer is NULL");
    return report.Take();
  }
  if (managed->deleter == nullptr) {
    report.Add("CONF-DELETER-NULL", Severity::kNote,
               "deleter is NULL: the consumer cannot tell the producer it is done");
  }
  CheckTensor(managed->dl_tensor, 0, false, false, false, report);
  return report.Take();
}

bool HasViolation(const std::vector<Finding>& findings) noexcept {
  for (const Finding& f : findings) {
    if (f.severity == Severity::kViolation) return true;
  }
  return false;
}

}  // namespace dlbridge
