// The conformance checker: reads a managed tensor, reports findings, consumes nothing.
// Every rule it reports is the importer's own, run through a collecting sink
// (dlpack_rules.h); this file holds the rule list (CONF-*) and the order of the passes.
#include "dlbridge/checker.h"

#include <cstdint>
#include <string>

#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack_rules.h"

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

using detail::CollectSink;

// The checks on a DLTensor: the importer's rules (dlpack_rules.h), every finding kept.
// `strict_strides`: DLPack >= 1.2 forbids NULL strides.
void CheckTensor(CollectSink& sink, const DLTensor& t, uint64_t flags, bool versioned,
                 bool strict_strides) {
  detail::CheckDtype(sink, t.dtype, flags);
  const DeviceTypeInfo* row = detail::CheckDevice(sink, t.device);
  if (!detail::CheckShape(sink, t, !strict_strides, versioned)) return;
  // With lanes 0 (already reported) an element has no width: the count and the stride reach
  // are still checked, over one-byte elements, and nothing past them.
  const bool widthless = t.dtype.lanes == 0;
  const DLDataType dtype = widthless ? DLDataType{t.dtype.code, 8, 1} : t.dtype;
  int64_t contiguous[TensorLayout::kMaxDims];
  detail::ByteSpan span;
  if (!detail::ComputeSpan(sink, dtype, flags, t.ndim, t.shape,
                           detail::EffectiveStrides(t, contiguous), &span) ||
      widthless) {
    return;
  }
  if (!detail::CheckData(sink, t.data, span)) return;
  // Handles (OpenCL, Vulkan, Metal, ...) are not addresses: no address arithmetic.
  if (row == nullptr || !row->exported) return;
  const uintptr_t base = reinterpret_cast<uintptr_t>(t.data);
  detail::CheckAlignment(sink, base, t.byte_offset);
  int64_t start = 0;
  uintptr_t pointer = 0;
  if (detail::CheckByteOffset(sink, t.byte_offset, span, &start)) {
    detail::CheckAddress(sink, base, t.byte_offset, start, span, &pointer);
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
  CollectSink sink;
  if (managed == nullptr) {
    sink.Add(detail::Rule::kNull, "the managed tensor pointer is NULL");
    return sink.Take();
  }
  // Another major may lay out everything after `flags` differently: touch nothing else.
  if (!detail::CheckVersion(sink, managed->version)) return sink.Take();
  sink.SetNewer(managed->version.minor > DLPACK_MINOR_VERSION);
  if (managed->deleter == nullptr) {
    sink.Add(detail::Rule::kDeleterNull,
             "deleter is NULL: the consumer cannot tell the producer it is done");
  }
  detail::CheckFlags(sink, managed->flags);
  CheckTensor(sink, managed->dl_tensor, managed->flags, true, managed->version.minor >= 2);
  return sink.Take();
}

std::vector<Finding> CheckDLPack(const DLManagedTensor* managed) {
  CollectSink sink;
  if (managed == nullptr) {
    sink.Add(detail::Rule::kNull, "the managed tensor pointer is NULL");
    return sink.Take();
  }
  if (managed->deleter == nullptr) {
    sink.Add(detail::Rule::kDeleterNull,
             "deleter is NULL: the consumer cannot tell the producer it is done");
  }
  CheckTensor(sink, managed->dl_tensor, 0, false, false);
  return sink.Take();
}

bool HasViolation(const std::vector<Finding>& findings) noexcept {
  for (const Finding& f : findings) {
    if (f.severity == Severity::kViolation) return true;
  }
  return false;
}

}  // namespace dlbridge
