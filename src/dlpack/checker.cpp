// The conformance checker: reads a managed tensor, reports findings, consumes nothing.
// Every rule it reports is the importer's own, run through a collecting sink
// (dlpack_rules.h), whose kRuleInfo also gives the rule list (CONF-*) its IDs, severities and
// order; this file adds each rule's one-line summary and holds the order of the passes.
#include "dlbridge/checker.h"

#include <cstdint>
#include <string>

#include "dlbridge/device_map.h"
#include "dlbridge/error.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/checker_internal.h"
#include "dlpack/dlpack_rules.h"

namespace dlbridge {

namespace {

using detail::kRuleInfo;
using detail::Rule;

// What each rule checks, one line, by Rule: the ID, severity and order are kRuleInfo's. An ID
// that several Rules report under (e.g. kNdimNegative and kNdimLimit) is listed once, at its
// first Rule, which carries the summary; its later Rules carry none.
struct Summary {
  Rule rule;
  const char* text;
};
constexpr Summary kSummaries[] = {
    {Rule::kNull, "the managed tensor pointer is not NULL"},
    {Rule::kVersionMajor,
     "version.major is 1 (another major: a consumer may only call the deleter)"},
    {Rule::kVersionMinorNewer,
     "version.minor is at most the checker's header minor (newer: unknown values are warnings)"},
    {Rule::kDeleterNull, "the deleter is set (NULL is allowed, nothing is freed)"},
    {Rule::kFlagsUnknown, "flags holds only bits the header defines"},
    {Rule::kFlagsPadded, "IS_SUBBYTE_TYPE_PADDED is set only on a sub-byte dtype"},
    {Rule::kNdimNegative, "ndim >= 0 (and at most 64, the checker's bound: warning)"},
    {Rule::kNdimLimit, nullptr},
    {Rule::kShapeNull, "shape is not NULL when ndim > 0"},
    {Rule::kShapeNegative, "every extent is >= 0"},
    {Rule::kStridesNull,
     "strides is not NULL when ndim > 0 for DLPack >= 1.2 (legacy and < 1.2: a note)"},
    {Rule::kStridesNullAllowed, nullptr},
    {Rule::kDtypeCode, "dtype.code is a DLDataTypeCode value"},
    {Rule::kDtypeLanes, "dtype.lanes >= 1"},
    {Rule::kDtypeBits, "dtype.bits matches dtype.code"},
    {Rule::kDeviceType, "device.device_type is a DLDeviceType value"},
    {Rule::kDeviceIdZero, "device_id is 0 for CPU, pinned and managed memory, >= 0 otherwise"},
    {Rule::kDeviceIdNegative, nullptr},
    {Rule::kDataNull, "data is not NULL when the tensor has elements"},
    {Rule::kDataZeroSize, "data is NULL when the tensor has no elements"},
    {Rule::kAlign, "data is aligned to 256 bytes (byte_offset locates element 0)"},
    {Rule::kOverflow,
     "extent, stride, byte size, byte_offset and address arithmetic fit int64 and do not wrap"},
    {Rule::kSubbyteBoundary, "a packed sub-byte tensor's lowest element starts on a byte boundary"},
};
constexpr int kRuleCount = static_cast<int>(sizeof(kRuleInfo) / sizeof(kRuleInfo[0]));

constexpr bool SameText(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}

// Whether Rule `i` is the first to report its CONF-* ID.
constexpr bool FirstOfId(int i) {
  for (int k = 0; k < i; ++k) {
    if (SameText(kRuleInfo[k].conf_id, kRuleInfo[i].conf_id)) return false;
  }
  return true;
}

// One summary per Rule, in Rule order, present exactly on each ID's first Rule.
constexpr bool SummariesAgree() {
  if (static_cast<int>(sizeof(kSummaries) / sizeof(kSummaries[0])) != kRuleCount) return false;
  for (int i = 0; i < kRuleCount; ++i) {
    if (static_cast<int>(kSummaries[i].rule) != i) return false;
    if ((kSummaries[i].text != nullptr) != FirstOfId(i)) return false;
  }
  return true;
}
static_assert(SummariesAgree(),
              "kSummaries needs one row per Rule, in order, with a summary "
              "on (and only on) the first Rule of each CONF-* ID");

constexpr int CountIds() {
  int n = 0;
  for (int i = 0; i < kRuleCount; ++i) n += FirstOfId(i) ? 1 : 0;
  return n;
}

// Counted once, at compile time: called at run time, CountIds compares every pair of IDs,
// which made each CheckerRules call (once per fuzz input) cost thousands of comparisons.
constexpr int kIdCount = CountIds();

struct RuleList {
  CheckerRule rules[kIdCount];
};

// The checker's rule list: each CONF-* ID of kRuleInfo once, in Rule order, with the severity
// of its first Rule.
constexpr RuleList MakeRules() {
  RuleList list{};
  int n = 0;
  for (int i = 0; i < kRuleCount; ++i) {
    if (!FirstOfId(i)) continue;
    list.rules[n++] = CheckerRule{kRuleInfo[i].conf_id, kRuleInfo[i].severity, kSummaries[i].text};
  }
  return list;
}
constexpr RuleList kRules = MakeRules();

using detail::CollectSink;

// The checks on a DLTensor: the importer's rules (dlpack_rules.h), every finding kept.
// `strict_strides`: DLPack >= 1.2 forbids NULL strides.
// `stand_in`: the device row the placement checks read instead of the table's (a test hook).
void CheckTensor(CollectSink& sink, const DLTensor& t, uint64_t flags, bool versioned,
                 bool strict_strides, const DeviceTypeInfo* stand_in = nullptr) {
  detail::CheckDtype(sink, t.dtype, flags);
  const DeviceTypeInfo* row = detail::CheckDevice(sink, t.device);
  if (stand_in != nullptr) row = stand_in;
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
  if (row == nullptr || !row->address_arithmetic) return;
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
  if (count != nullptr) *count = kIdCount;
  return kRules.rules;
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

namespace detail {

std::vector<Finding> CheckTensorWithRow(const DLManagedTensorVersioned& managed,
                                        const DeviceTypeInfo& row) {
  CollectSink sink;
  CheckTensor(sink, managed.dl_tensor, managed.flags, true, managed.version.minor >= 2, &row);
  return sink.Take();
}

}  // namespace detail
}  // namespace dlbridge
