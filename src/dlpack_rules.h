// The structural DLPack rules, each written once with its spec IDs beside it.
//
// One rule sequence, two ways to hear about a violation (the sink):
//  - ThrowSink: the importer and exporter. The first enforced rule broken throws
//    Error(code, "<where>: <message>") through detail::Fail; nothing is allocated first.
//  - CollectSink: the checker. Every finding is kept, with its CONF-* ID and severity.
// Messages are built only when a rule is broken (a callable), so the passing path of an
// import costs the comparisons and nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checked_math_internal.h"
#include "dlbridge/checker.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/error.h"
#include "error_internal.h"

namespace dlbridge {
namespace detail {

/// Every structural rule. Import/export IDs are in spec/validation.md, CONF-* in
/// spec/conformance.md.
enum class Rule : uint8_t {
  kNull,                // IMP-1, CONF-NULL
  kVersionMajor,        // IMP-4, CONF-VERSION-MAJOR
  kVersionMinorNewer,   // IMP-5, CONF-VERSION-MINOR (accepted; a note)
  kDeleterNull,         // CONF-DELETER-NULL (accepted; a note)
  kFlagsUnknown,        // IMP-5, EXP-13, CONF-FLAGS-UNKNOWN
  kFlagsPadded,         // CONF-FLAGS-PADDED (accepted; a warning)
  kNdimNegative,        // IMP-6, CONF-NDIM
  kNdimLimit,           // IMP-6, CONF-NDIM (ndim > 64: dlbridge's bound; the checker warns)
  kShapeNull,           // IMP-7, CONF-SHAPE-NULL
  kShapeNegative,       // IMP-8, CONF-SHAPE-NEGATIVE
  kStridesNull,         // IMP-9, CONF-STRIDES-NULL (>= 1.2)
  kStridesNullAllowed,  // IMP-9, CONF-STRIDES-NULL (legacy, < 1.2: a note)
  kDtypeCode,           // IMP-12, EXP-13, CONF-DTYPE-CODE
  kDtypeLanes,          // IMP-12, EXP-13, CONF-DTYPE-LANES
  kDtypeBits,           // IMP-12, EXP-13, CONF-DTYPE-BITS
  kDeviceType,          // IMP-16, CONF-DEVICE-TYPE
  kDeviceIdZero,        // CONF-DEVICE-ID (import normalises the id to 0 instead: DEV-3)
  kDeviceIdNegative,    // IMP-16, CONF-DEVICE-ID
  kDataNull,            // IMP-11, CONF-DATA-NULL
  kDataZeroSize,        // IMP-11, CONF-DATA-ZERO-SIZE (accepted; a note)
  kAlign,               // CONF-ALIGN (accepted; a note)
  kOverflow,            // IMP-10, EXP-9, CONF-OVERFLOW
  kSubbyteBoundary,     // IMP-13, CONF-SUBBYTE-BOUNDARY
};

/// What a rule is called and what breaking it means, for each sink.
struct RuleInfo {
  const char* conf_id;  ///< The checker's rule ID.
  Severity severity;    ///< In the checker, for a producer of this build's minor or older.
  ErrorCode code;       ///< What the importer throws.
  bool enforced;        ///< false: the importer accepts it (the checker still reports it).
  bool unknown_value;   ///< A value this build does not know: a warning for newer producers.
};

// Indexed by Rule (checked below), so a sink's lookup of a constant rule folds away.
inline constexpr RuleInfo kRuleInfo[] = {
    {"CONF-NULL", Severity::kViolation, ErrorCode::kInvalidArgument, true, false},
    {"CONF-VERSION-MAJOR", Severity::kViolation, ErrorCode::kUnsupportedVersion, true, false},
    {"CONF-VERSION-MINOR", Severity::kNote, ErrorCode::kUnsupportedVersion, false, false},
    {"CONF-DELETER-NULL", Severity::kNote, ErrorCode::kInvalidArgument, false, false},
    {"CONF-FLAGS-UNKNOWN", Severity::kViolation, ErrorCode::kInvalidFlags, true, true},
    {"CONF-FLAGS-PADDED", Severity::kWarning, ErrorCode::kInvalidFlags, false, false},
    {"CONF-NDIM", Severity::kViolation, ErrorCode::kInvalidShape, true, false},
    {"CONF-NDIM", Severity::kWarning, ErrorCode::kInvalidShape, true, false},
    {"CONF-SHAPE-NULL", Severity::kViolation, ErrorCode::kInvalidShape, true, false},
    {"CONF-SHAPE-NEGATIVE", Severity::kViolation, ErrorCode::kInvalidShape, true, false},
    {"CONF-STRIDES-NULL", Severity::kViolation, ErrorCode::kInvalidStrides, true, false},
    {"CONF-STRIDES-NULL", Severity::kNote, ErrorCode::kInvalidStrides, false, false},
    {"CONF-DTYPE-CODE", Severity::kViolation, ErrorCode::kInvalidDtype, true, true},
    {"CONF-DTYPE-LANES", Severity::kViolation, ErrorCode::kInvalidDtype, true, false},
    {"CONF-DTYPE-BITS", Severity::kViolation, ErrorCode::kInvalidDtype, true, false},
    {"CONF-DEVICE-TYPE", Severity::kViolation, ErrorCode::kUnsupportedDevice, true, true},
    {"CONF-DEVICE-ID", Severity::kViolation, ErrorCode::kDeviceMismatch, false, false},
    {"CONF-DEVICE-ID", Severity::kViolation, ErrorCode::kDeviceMismatch, true, false},
    {"CONF-DATA-NULL", Severity::kViolation, ErrorCode::kNullData, true, false},
    {"CONF-DATA-ZERO-SIZE", Severity::kNote, ErrorCode::kNullData, false, false},
    {"CONF-ALIGN", Severity::kNote, ErrorCode::kInvalidArgument, false, false},
    {"CONF-OVERFLOW", Severity::kViolation, ErrorCode::kOverflow, true, false},
    {"CONF-SUBBYTE-BOUNDARY", Severity::kViolation, ErrorCode::kInvalidStrides, true, false},
};
static_assert(sizeof(kRuleInfo) / sizeof(kRuleInfo[0]) ==
                  static_cast<size_t>(Rule::kSubbyteBoundary) + 1,
              "kRuleInfo needs one row per Rule, in order");

constexpr const RuleInfo& InfoOf(Rule rule) noexcept { return kRuleInfo[static_cast<int>(rule)]; }

/// The importer's and exporter's sink: the first enforced rule broken throws.
class ThrowSink {
 public:
  explicit ThrowSink(const char* where) noexcept : where_(where) {}
  template <class MakeMessage>
  void Report(Rule rule, MakeMessage&& make) const {
    if (InfoOf(rule).enforced) Throw(InfoOf(rule).code, make());
  }
  /// Throws Error(code, "<where>: <message>").
  [[noreturn]] void Throw(ErrorCode code, const std::string& message) const;

 private:
  const char* where_;
};

/// The checker's sink: every finding, with its CONF-* ID; `newer` (a producer minor newer
/// than this build's header) turns findings about unknown values into warnings.
class CollectSink {
 public:
  explicit CollectSink(bool newer = false) noexcept : newer_(newer) {}
  template <class MakeMessage>
  void Report(Rule rule, MakeMessage&& make) {
    Add(rule, make());
  }
  void Add(Rule rule, std::string message);
  void SetNewer(bool newer) noexcept { newer_ = newer; }
  std::vector<Finding> Take() { return std::move(findings_); }

 private:
  bool newer_;
  std::vector<Finding> findings_;
};

/// The bytes a layout can touch, relative to element zero.
struct ByteSpan {
  int64_t count = 0;  ///< Number of elements.
  int64_t low = 0;    ///< Byte offset of the lowest reachable byte from element zero (<= 0).
  int64_t bytes = 0;  ///< Bytes from the lowest to one past the highest reachable byte.
};

/// The flag bits this build knows.
uint64_t KnownFlags() noexcept;
/// Whether this build knows the dtype code.
bool IsKnownDtypeCode(uint8_t code) noexcept;
/// Whether elements of this dtype are packed below byte granularity (fp4/fp6 unpadded).
bool IsPackedSubByte(DLDataType dtype, uint64_t flags) noexcept;
/// The dtype table (IMP-12), for code <-> name parsing and printing (src/dtype.cpp):
/// the name of a known code ("float"), nullptr when unknown.
const char* DtypeCodeName(uint8_t code) noexcept;
/// Codes 0 .. DtypeCodeCount() - 1 are known to this build.
int DtypeCodeCount() noexcept;
/// Whether `bits` is an accepted width for a known `code`.
bool DtypeBitsValid(uint8_t code, uint8_t bits) noexcept;
/// "int32x4"-style text of a dtype for messages.
std::string DtypeText(DLDataType dtype);
/// "0x1f"-style text for messages.
std::string Hex(uint64_t value);

// ---- The rules. Each returns false when what follows cannot be read safely. ----

/// IMP-4: a major version other than 1 may lay out everything after `flags` differently.
/// IMP-5: a newer minor is accepted (the checker notes it).
template <class Sink>
bool CheckVersion(Sink& sink, DLPackVersion version);

/// IMP-5, EXP-13: only flag bits this build defines; `field` names them in the message
/// ("flags" on import, "Tensor::flags" on export).
template <class Sink>
void CheckFlags(Sink& sink, uint64_t flags, const char* field = "flags");

/// IMP-12, EXP-13: a known code, lanes >= 1, bits that match the code; `flags` for the
/// checker's padded-flag warning.
template <class Sink>
void CheckDtype(Sink& sink, DLDataType dtype, uint64_t flags);

/// IMP-6..IMP-9: ndim in [0, 64], shape non-NULL, extents >= 0, NULL strides only where
/// allowed (`null_strides_allowed`; `versioned` words the checker's note). Returns false when
/// shape and strides cannot be read or have negative extents.
template <class Sink>
bool CheckShape(Sink& sink, const DLTensor& t, bool null_strides_allowed, bool versioned);

/// IMP-16: the device type is one this build knows; device_id >= 0 where an id counts, and
/// (the checker only) 0 where it does not. Returns the row, or nullptr when unknown.
template <class Sink>
const DeviceTypeInfo* CheckDevice(Sink& sink, DLDevice device);

/// IMP-10, IMP-13, EXP-9: the span of ndim extents (>= 0) and strides (non-NULL when
/// ndim > 0), every product and sum checked for int64 overflow. False on a violation.
template <class Sink>
bool ComputeSpan(Sink& sink, DLDataType dtype, uint64_t flags, int32_t ndim, const int64_t* shape,
                 const int64_t* strides, ByteSpan* span);

/// The strides a tensor's NULL strides stand for (C-contiguous), written into `scratch`
/// (TensorLayout::kMaxDims entries); the tensor's own strides otherwise. Exact whenever the
/// element count fits int64, which ComputeSpan checks before reading them.
const int64_t* EffectiveStrides(const DLTensor& t, int64_t* scratch) noexcept;

/// IMP-11: data is non-NULL when the tensor has elements (the checker notes non-NULL data
/// without elements). Returns true when there are bytes to locate (elements and data).
template <class Sink>
bool CheckData(Sink& sink, const void* data, const ByteSpan& span);

/// IMP-10: byte_offset fits int64 and, added to the span's low end, still does: `*start` is
/// the first reachable byte's distance from data.
template <class Sink>
bool CheckByteOffset(Sink& sink, uint64_t byte_offset, const ByteSpan& span, int64_t* start);

/// IMP-10: data + start .. + span.bytes neither wraps nor passes INT64_MAX (addresses are int64
/// in dlbridge) nor starts at 0; `*pointer` is the first reachable byte. `byte_offset` words
/// the message.
template <class Sink>
bool CheckAddress(Sink& sink, uintptr_t base, uint64_t byte_offset, int64_t start,
                  const ByteSpan& span, uintptr_t* pointer);

/// CONF-ALIGN (the checker only): data is 256-byte aligned.
template <class Sink>
void CheckAlignment(Sink& sink, uintptr_t base, uint64_t byte_offset);

/// The throwing forms the exporter uses (EXP-13, EXP-9): ThrowSink(where) over the rules above.
void CheckFlagsOrThrow(const char* where, uint64_t flags, const char* field);
void CheckDtypeOrThrow(const char* where, DLDataType dtype);
ByteSpan ComputeSpanOrThrow(const char* where, DLDataType dtype, uint64_t flags, int32_t ndim,
                            const int64_t* shape, const int64_t* strides);

}  // namespace detail
}  // namespace dlbridge
