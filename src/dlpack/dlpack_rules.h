// The structural DLPack rules, each written once with its spec IDs beside it.
//
// One rule sequence, two ways to hear about a violation (the sink):
//  - ThrowSink: the importer and exporter. The first enforced rule broken throws
//    Error(code, "<where>: <message>") through detail::Fail; nothing is allocated first.
//  - CollectSink: the checker. Every finding is kept, with its CONF-* ID and severity.
// Messages are built only when a rule is broken (a callable), so the passing path of an
// import costs the comparisons and nothing else.
//
// Each rule's test is one predicate (inline, noexcept, below the tables): the checks call it
// and report through their sink when it fails, and the fast paths (dlpack_fast_paths.h) are
// built from the same predicates, so no rule is written twice.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/error_internal.h"
#include "devices/device_map_internal.h"
#include "dlbridge/device_map.h"
#include "dlbridge/dlpack_header.h"
#include "dlbridge/error.h"
#include "dlbridge/findings.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/checked_math_internal.h"

namespace dlbridge {
namespace detail {

/// Every structural rule. Import/export IDs are in spec/validation.md, CONF-* in
/// spec/conformance.md.
enum class Rule : uint8_t {
  kNull,                // CONF-NULL (the importer's null check: see IMP-3)
  kVersionMajor,        // IMP-4, CONF-VERSION-MAJOR
  kVersionMinorNewer,   // IMP-5, CONF-VERSION-MINOR (accepted; a note)
  kDeleterNull,         // CONF-DELETER-NULL (accepted; a note)
  kFlagsUnknown,        // IMP-5, CONF-FLAGS-UNKNOWN (export: see EXP-13)
  kFlagsPadded,         // CONF-FLAGS-PADDED (accepted; a warning)
  kNdimNegative,        // IMP-6, CONF-NDIM
  kNdimLimit,           // IMP-6, CONF-NDIM (ndim > 64: dlbridge's bound; the checker warns)
  kShapeNull,           // IMP-7, CONF-SHAPE-NULL
  kShapeNegative,       // IMP-8, CONF-SHAPE-NEGATIVE
  kStridesNull,         // IMP-9, CONF-STRIDES-NULL (>= 1.2)
  kStridesNullAllowed,  // IMP-9, CONF-STRIDES-NULL (legacy, < 1.2: a note)
  kDtypeCode,           // IMP-12, CONF-DTYPE-CODE (export: see EXP-13)
  kDtypeLanes,          // IMP-12, CONF-DTYPE-LANES (export: see EXP-13)
  kDtypeBits,           // IMP-12, CONF-DTYPE-BITS (export: see EXP-13)
  kDeviceType,          // CONF-DEVICE-TYPE (import: see DEV-1)
  kDeviceIdZero,        // CONF-DEVICE-ID (import normalises the id to 0 instead: see DEV-3)
  kDeviceIdNegative,    // CONF-DEVICE-ID (import: HOST-35)
  kDataNull,            // IMP-11, CONF-DATA-NULL
  kDataZeroSize,        // IMP-11, CONF-DATA-ZERO-SIZE (accepted; a note)
  kAlign,               // CONF-ALIGN (accepted; a note)
  kOverflow,            // IMP-10, CONF-OVERFLOW (export: see EXP-9)
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
    {"CONF-DTYPE-CODE", Severity::kViolation, ErrorCode::kUnsupportedDtype, true, true},
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
    if (InfoOf(rule).enforced) ThrowWith(InfoOf(rule).code, make);
  }
  /// Throws Error(code, "<where>: <message>").
  [[noreturn]] void Throw(ErrorCode code, const std::string& message) const;

 private:
  // Out of line and cold: the message is built only here, off the passing path.
  template <class MakeMessage>
  [[noreturn, gnu::cold, gnu::noinline]] void ThrowWith(ErrorCode code, MakeMessage& make) const {
    Throw(code, make());
  }
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

/// The dtype table (IMP-12), for code <-> name parsing and printing (src/core/dtype.cpp), with
/// DtypeCodeCount() and DtypeBitsValid() below: the name of a known code ("float"), nullptr
/// when unknown.
const char* DtypeCodeName(uint8_t code) noexcept;
/// "int32x4"-style text of a dtype for messages.
std::string DtypeText(DLDataType dtype);
/// "0x1f"-style text for messages.
std::string Hex(uint64_t value);

// ---- Tables (IMP-12, IMP-5) ----

struct DtypeRow {
  uint8_t code;
  const char* name;
  uint8_t bits[8];  // accepted widths, 0-terminated
};

// IMP-12. Codes as numbers so the table compiles against any 1.x header; the float8/6/4
// codes arrived with DLPack 1.1 and are known only when the header is at least that. int and
// uint take the header's sub-byte widths 1, 2 and 4 too (packed unless IS_SUBBYTE_TYPE_PADDED:
// IMP-13), in every header version.
inline constexpr DtypeRow kDtypes[] = {
    {0, "int", {1, 2, 4, 8, 16, 32, 64}},
    {1, "uint", {1, 2, 4, 8, 16, 32, 64}},
    {2, "float", {16, 32, 64, 0}},
    {3, "opaque_handle", {8, 16, 32, 64}},
    {4, "bfloat", {16, 0, 0, 0}},
    {5, "complex", {64, 128, 0, 0}},
    {6, "bool", {8, 0, 0, 0}},
#if DLPACK_MAJOR_VERSION > 1 || DLPACK_MINOR_VERSION >= 1
    {7, "float8_e3m4", {8, 0, 0, 0}},
    {8, "float8_e4m3", {8, 0, 0, 0}},
    {9, "float8_e4m3b11fnuz", {8, 0, 0, 0}},
    {10, "float8_e4m3fn", {8, 0, 0, 0}},
    {11, "float8_e4m3fnuz", {8, 0, 0, 0}},
    {12, "float8_e5m2", {8, 0, 0, 0}},
    {13, "float8_e5m2fnuz", {8, 0, 0, 0}},
    {14, "float8_e8m0fnu", {8, 0, 0, 0}},
    {15, "float6_e2m3fn", {6, 0, 0, 0}},
    {16, "float6_e3m2fn", {6, 0, 0, 0}},
    {17, "float4_e2m1fn", {4, 0, 0, 0}},
#endif
};

inline constexpr size_t kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);
constexpr bool RowsAreIndexedByCode() {
  for (size_t i = 0; i < kDtypeCount; ++i) {
    if (kDtypes[i].code != i) return false;
  }
  return true;
}
static_assert(RowsAreIndexedByCode(), "kDtypes[i] must describe code i: lookups index it");

// On every export and import: a direct index, not a search.
inline const DtypeRow* FindDtype(uint8_t code) noexcept {
  return code < kDtypeCount ? &kDtypes[code] : nullptr;
}

inline uint64_t KnownFlags() noexcept {
  uint64_t known = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  known |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
#endif
  return known;
}
inline bool IsKnownDtypeCode(uint8_t code) noexcept { return FindDtype(code) != nullptr; }
inline int DtypeCodeCount() noexcept { return static_cast<int>(kDtypeCount); }
// kDtypes' bits lists as one table, [code][bits]: the check is one load, not a walk.
struct DtypeBitsTable {
  bool accepted[kDtypeCount][256] = {};
  constexpr DtypeBitsTable() {
    for (size_t code = 0; code < kDtypeCount; ++code) {
      for (uint8_t b : kDtypes[code].bits) {
        if (b != 0) accepted[code][b] = true;
      }
    }
  }
};
inline constexpr DtypeBitsTable kDtypeBits{};
inline bool DtypeBitsValid(uint8_t code, uint8_t bits) noexcept {
  return code < kDtypeCount && kDtypeBits.accepted[code][bits];
}
inline bool IsPackedSubByte(DLDataType dtype, uint64_t flags) noexcept {
  const int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;
  if (elementBits % 8 == 0) return false;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  if (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) return false;
#else
  (void)flags;
#endif
  return true;
}
/// Message helpers (cold): "8, 16, 32, 64" and "1.3".
std::string BitsList(const DtypeRow& row);
std::string HeaderVersion();

// ---- The predicates: each rule's test, once. The checks below report through their sink when
// one fails; the fast paths (dlpack_fast_paths.h) are conjunctions of them. ----

/// IMP-4: the one major version whose fields past `flags` dlbridge may read.
inline bool VersionReadable(DLPackVersion version) noexcept { return version.major == 1; }

/// IMP-5 (export: see EXP-13): only flag bits this build defines.
inline bool FlagsKnown(uint64_t flags) noexcept { return (flags & ~KnownFlags()) == 0; }

/// IMP-12 (export: see EXP-13): a known code, lanes >= 1, and bits that match the code.
inline bool DtypeValid(DLDataType dtype) noexcept {
  return dtype.lanes != 0 && DtypeBitsValid(dtype.code, dtype.bits);
}

/// IMP-6: ndim in [0, TensorLayout::kMaxDims] (one unsigned comparison).
inline bool NdimValid(int32_t ndim) noexcept {
  return static_cast<uint32_t>(ndim) <= static_cast<uint32_t>(TensorLayout::kMaxDims);
}

/// IMP-7: shape is given when there are dimensions.
inline bool ShapeGiven(int32_t ndim, const int64_t* shape) noexcept {
  return ndim <= 0 || shape != nullptr;
}

/// IMP-9: which tensors may have NULL strides: legacy ones, versioned ones before 1.2, and
/// any where ImportOptions::allow_null_strides says so.
inline bool NullStridesAllowed(bool legacy, DLPackVersion version,
                               bool allow_null_strides) noexcept {
  return legacy || version.minor < 2 || allow_null_strides;
}

/// IMP-9: strides are given when there are dimensions, unless NULL strides are allowed
/// (`null_allowed()`, asked only when they are NULL: the fast path's question is not free).
template <class NullAllowed>
inline bool StridesAccepted(int32_t ndim, const int64_t* strides, NullAllowed&& null_allowed) {
  return ndim <= 0 || strides != nullptr || null_allowed();
}
inline bool StridesAccepted(int32_t ndim, const int64_t* strides, bool null_allowed) noexcept {
  return StridesAccepted(ndim, strides, [null_allowed] { return null_allowed; });
}

/// CONF-DEVICE-ID (import: HOST-35): device_id >= 0 where the id is a device ordinal.
inline bool DeviceIdValid(const DeviceTypeInfo& row, int32_t device_id) noexcept {
  return row.id_is_zero || device_id >= 0;
}

/// DEV-3: the device an import carries: the producer's, with the id 0 where the type's id is
/// always 0 (the header's rule, which some producers break: normalised, not refused).
inline DLDevice ImportedDevice(const DeviceTypeInfo& row, DLDevice device) noexcept {
  return DLDevice{device.device_type, row.id_is_zero ? 0 : device.device_id};
}

/// IMP-15: the flags an import carries (the producer's; a legacy tensor has none, or
/// READ_ONLY when ImportOptions::legacy_read_only asks), and whether they satisfy
/// ImportOptions::require_writable.
inline uint64_t ImportedFlags(bool legacy, uint64_t producer_flags,
                              bool legacy_read_only) noexcept {
  if (!legacy) return producer_flags;
  return legacy_read_only ? uint64_t{DLPACK_FLAG_BITMASK_READ_ONLY} : 0;
}
inline bool WritableAsRequired(uint64_t flags, bool require_writable) noexcept {
  return !require_writable || (flags & DLPACK_FLAG_BITMASK_READ_ONLY) == 0;
}

/// IMP-11: data is non-NULL when the tensor has elements.
inline bool DataGiven(const void* data, int64_t count) noexcept {
  return count == 0 || data != nullptr;
}

/// IMP-10: byte_offset fits int64 and, added to the span's low end `low`, still does: `*start`
/// is the first reachable byte's distance from data.
[[gnu::always_inline]] inline bool StartOf(uint64_t byte_offset, int64_t low,
                                           int64_t* start) noexcept {
  return byte_offset <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
         !AddOverflows(static_cast<int64_t>(byte_offset), low, start);
}

/// IMP-10 (export: see EXP-18), the address-range test, the only one: `bytes` from
/// base + start neither wrap around the address space nor start at 0 or past INT64_MAX
/// (addresses are int64 in dlbridge, as in every framework's Python API); `*first` is the
/// first reachable byte.
[[gnu::always_inline]] inline bool AddressRangeValid(uintptr_t base, int64_t start, int64_t bytes,
                                                     uintptr_t* first) noexcept {
  const uintptr_t at = base + static_cast<uintptr_t>(start);
  const bool wraps = start < 0 ? at > base : at < base;
  // at == 0 or at > INT64_MAX in one unsigned comparison (at - 1 wraps to the top for 0).
  if (wraps || at - 1 >= static_cast<uintptr_t>(std::numeric_limits<int64_t>::max()) ||
      at + static_cast<uintptr_t>(bytes) < at) {
    return false;
  }
  *first = at;
  return true;
}

// ---- The rules. Each returns false when what follows cannot be read safely. ----

/// IMP-4: a major version other than 1 may lay out everything after `flags` differently.
/// IMP-5: a newer minor is accepted (the checker notes it).
template <class Sink>
bool CheckVersion(Sink& sink, DLPackVersion version);

/// IMP-5 (export: see EXP-13): only flag bits this build defines; `field` names them in the
/// message ("flags" on import, "Tensor::flags" on export).
template <class Sink>
void CheckFlags(Sink& sink, uint64_t flags, const char* field = "flags");

/// IMP-12 (export: see EXP-13): a known code, lanes >= 1, bits that match the code; `flags`
/// for the checker's padded-flag warning.
template <class Sink>
void CheckDtype(Sink& sink, DLDataType dtype, uint64_t flags);

/// IMP-6..IMP-9: ndim in [0, 64], shape non-NULL, extents >= 0, NULL strides only where
/// allowed (`null_strides_allowed`; `versioned` words the checker's note). Returns false when
/// shape and strides cannot be read or have negative extents.
template <class Sink>
bool CheckShape(Sink& sink, const DLTensor& t, bool null_strides_allowed, bool versioned);

/// The device type is one this build knows (see DEV-1); device_id >= 0 where an id counts, and
/// (the checker only) 0 where it does not. Returns the row, or nullptr when unknown.
template <class Sink>
const DeviceTypeInfo* CheckDevice(Sink& sink, DLDevice device);

/// IMP-10, IMP-13 (export: see EXP-9): the span of ndim extents (>= 0) and strides (non-NULL when
/// ndim > 0), every product and sum checked for int64 overflow. False on a violation.
template <class Sink>
bool ComputeSpan(Sink& sink, DLDataType dtype, uint64_t flags, int32_t ndim, const int64_t* shape,
                 const int64_t* strides, ByteSpan* span);

/// The strides a tensor's NULL strides stand for (C-contiguous), written into `scratch`
/// (TensorLayout::kMaxDims entries); the tensor's own strides otherwise. Exact whenever the
/// element count fits int64, which ComputeSpan checks before reading them.
inline const int64_t* EffectiveStrides(const DLTensor& t, int64_t* scratch) noexcept;

/// IMP-11: data is non-NULL when the tensor has elements (the checker notes non-NULL data
/// without elements). Returns true when there are bytes to locate (elements and data).
template <class Sink>
bool CheckData(Sink& sink, const void* data, const ByteSpan& span);

/// IMP-10: byte_offset fits int64 and, added to the span's low end, still does: `*start` is
/// the first reachable byte's distance from data.
template <class Sink>
bool CheckByteOffset(Sink& sink, uint64_t byte_offset, const ByteSpan& span, int64_t* start);

/// IMP-10 (export: see EXP-18): AddressRangeValid(base, start, span.bytes); `*pointer` is the
/// first reachable byte. `byte_offset` and `base_name` (what `base` is called) word the message.
template <class Sink>
bool CheckAddress(Sink& sink, uintptr_t base, uint64_t byte_offset, int64_t start,
                  const ByteSpan& span, uintptr_t* pointer, const char* base_name = "data");

/// CONF-ALIGN (the checker only): data is 256-byte aligned.
template <class Sink>
void CheckAlignment(Sink& sink, uintptr_t base, uint64_t byte_offset);

/// The throwing forms the exporter uses (see EXP-13, see EXP-9): ThrowSink(where) over the rules
/// above.
void CheckFlagsOrThrow(const char* where, uint64_t flags, const char* field);
void CheckDtypeOrThrow(const char* where, DLDataType dtype);
ByteSpan ComputeSpanOrThrow(const char* where, DLDataType dtype, uint64_t flags, int32_t ndim,
                            const int64_t* shape, const int64_t* strides);

// ---- Rule bodies: templates, inlined into the importer, exporter and checker ----

template <class Sink>
bool CheckVersion(Sink& sink, DLPackVersion version) {
  if (!VersionReadable(version)) {  // IMP-4, CONF-VERSION-MAJOR
    sink.Report(Rule::kVersionMajor, [&] {
      return "DLPack version " + std::to_string(version.major) + "." +
             std::to_string(version.minor) + " is not supported; accepted: 1.x";
    });
    return false;
  }
  if (version.minor > DLPACK_MINOR_VERSION) {  // IMP-5, CONF-VERSION-MINOR
    sink.Report(Rule::kVersionMinorNewer, [&] {
      return "version is 1." + std::to_string(version.minor) + ", newer than this build's " +
             HeaderVersion() + ": values it does not know are " +
             "rejected on import and warnings in the checker";
    });
  }
  return true;
}

template <class Sink>
void CheckFlags(Sink& sink, uint64_t flags, const char* field) {
  if (!FlagsKnown(flags)) {  // IMP-5, CONF-FLAGS-UNKNOWN (export: see EXP-13)
    sink.Report(Rule::kFlagsUnknown, [&] {
      const uint64_t unknown = flags & ~KnownFlags();
      return std::string(field) + " has bits " + Hex(unknown) + " that DLPack " + HeaderVersion() +
             " does not define; known: " + Hex(KnownFlags());
    });
  }
}

template <class Sink>
void CheckDtype(Sink& sink, DLDataType dtype, uint64_t flags) {
  if (!DtypeValid(dtype)) {  // IMP-12: every part that fails is a finding of its own
    const DtypeRow* row = FindDtype(dtype.code);
    if (row == nullptr) {  // IMP-12, CONF-DTYPE-CODE
      sink.Report(Rule::kDtypeCode, [&] {
        return "dtype.code " + std::to_string(dtype.code) + " is unknown to this build (DLPack " +
               HeaderVersion() + "); accepted: 0.." + std::to_string(kDtypes[kDtypeCount - 1].code);
      });
    }
    if (dtype.lanes == 0) {  // IMP-12, CONF-DTYPE-LANES
      sink.Report(Rule::kDtypeLanes,
                  [] { return std::string("dtype.lanes is 0; lanes must be >= 1"); });
    }
    if (row != nullptr && !DtypeBitsValid(dtype.code, dtype.bits)) {  // IMP-12, CONF-DTYPE-BITS
      sink.Report(Rule::kDtypeBits, [&] {
        return "dtype.bits " + std::to_string(dtype.bits) + " does not match code " +
               std::to_string(dtype.code) + " (" + row->name +
               "); accepted bits: " + BitsList(*row);
      });
    }
  }
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  if ((flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) &&
      (int64_t{dtype.bits} * dtype.lanes) % 8 == 0) {  // CONF-FLAGS-PADDED
    sink.Report(Rule::kFlagsPadded, [&] {
      return "IS_SUBBYTE_TYPE_PADDED is set on " + DtypeText(dtype) +
             ", which is not a sub-byte type";
    });
  }
#else
  (void)flags;
#endif
}

template <class Sink>
bool CheckShape(Sink& sink, const DLTensor& t, bool null_strides_allowed, bool versioned) {
  if (!NdimValid(t.ndim)) {  // IMP-6, CONF-NDIM: reads stay bounded
    if (t.ndim < 0) {
      sink.Report(Rule::kNdimNegative, [&] {
        return "ndim is " + std::to_string(t.ndim) + "; accepted: 0.." +
               std::to_string(TensorLayout::kMaxDims);
      });
    } else {
      sink.Report(Rule::kNdimLimit, [&] {
        return "ndim is " + std::to_string(t.ndim) + "; accepted: 0.." +
               std::to_string(TensorLayout::kMaxDims) +
               " (dlbridge's bound: shape, strides and the layout are not read)";
      });
    }
    return false;
  }
  if (!ShapeGiven(t.ndim, t.shape)) {  // IMP-7, CONF-SHAPE-NULL
    sink.Report(Rule::kShapeNull,
                [&] { return "shape is NULL with ndim " + std::to_string(t.ndim); });
    return false;
  }
  bool negative = false;
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.shape[i] < 0) {  // IMP-8, CONF-SHAPE-NEGATIVE
      negative = true;
      sink.Report(Rule::kShapeNegative, [&] {
        return "shape[" + std::to_string(i) + "] is " + std::to_string(t.shape[i]) +
               "; extents must be >= 0";
      });
    }
  }
  if (!StridesAccepted(t.ndim, t.strides, null_strides_allowed)) {  // IMP-9, CONF-STRIDES-NULL
    sink.Report(Rule::kStridesNull, [&] {
      return "strides is NULL with ndim " + std::to_string(t.ndim) +
             "; DLPack >= 1.2 requires strides (ImportOptions::allow_null_strides relaxes this)";
    });
  } else if (!StridesAccepted(t.ndim, t.strides, false)) {  // allowed: the checker's note
    sink.Report(Rule::kStridesNullAllowed, [&] {
      return "strides is NULL with ndim " + std::to_string(t.ndim) + " (" +
             (versioned ? "allowed before DLPack 1.2" : "allowed for legacy tensors") +
             ": C-contiguous)";
    });
  }
  return !negative;
}

template <class Sink>
const DeviceTypeInfo* CheckDevice(Sink& sink, DLDevice device) {
  const DeviceTypeInfo* row = DeviceRow(static_cast<int32_t>(device.device_type));
  if (row == nullptr) {  // CONF-DEVICE-TYPE (import: see DEV-1)
    sink.Report(Rule::kDeviceType, [&] {
      return "device_type " + std::to_string(device.device_type) +
             " is unknown to this build (DLPack " + HeaderVersion() +
             "); accepted: " + AcceptedImportDeviceTypes();
    });
    return nullptr;
  }
  if (row->id_is_zero && device.device_id != 0) {  // CONF-DEVICE-ID (import: see DEV-3)
    sink.Report(Rule::kDeviceIdZero, [&] {
      return "device_id is " + std::to_string(device.device_id) + " for " + row->name +
             "; the header sets it to 0 for CPU, pinned and managed memory";
    });
  } else if (!DeviceIdValid(*row, device.device_id)) {  // CONF-DEVICE-ID (import: HOST-35)
    sink.Report(Rule::kDeviceIdNegative, [&] {
      return "device_id is " + std::to_string(device.device_id) + " for " + row->name +
             "; accepted: >= 0";
    });
  }
  return row;
}

inline const int64_t* EffectiveStrides(const DLTensor& t, int64_t* scratch) noexcept {
  if (t.ndim == 0 || t.strides != nullptr) return t.strides;
  int64_t step = 1;
  for (int32_t k = t.ndim - 1; k >= 0; --k) {
    scratch[k] = step;
    // Overflow only when the count does too, which ComputeSpan reports before any stride.
    if (t.shape[k] > 1 && MulOverflows(step, t.shape[k], &step)) step = 0;
  }
  return scratch;
}

template <class Sink>
bool ComputeSpan(Sink& sink, DLDataType dtype, uint64_t flags, int32_t ndim, const int64_t* shape,
                 const int64_t* strides, ByteSpan* out) {
  // One pass: the count, the lowest and highest element reached, and the first index where
  // either overflows. Which is reported is decided after it, in the order of the rules: no
  // elements (IMP-11: nothing is reached, nothing can overflow), then the count, then the
  // reach.
  ByteSpan span;
  bool empty = false;
  int32_t countOverflowAt = -1;
  int32_t reachOverflowAt = -1;
  int64_t count = 1;
  int64_t lo = 0;  // lowest and highest element offsets reached, from element zero
  int64_t hi = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    const int64_t extent = shape[i];
    empty = empty || extent == 0;
    if (countOverflowAt < 0 && MulOverflows(count, extent, &count)) countOverflowAt = i;
    int64_t reach = 0;
    if (reachOverflowAt < 0 && (MulOverflows(strides[i], extent - 1, &reach) ||
                                AddOverflows(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi))) {
      reachOverflowAt = i;
    }
  }
  if (empty) {
    *out = span;
    return true;
  }
  if (countOverflowAt >= 0) {  // IMP-10, CONF-OVERFLOW
    const int32_t i = countOverflowAt;
    sink.Report(Rule::kOverflow, [&] {
      return "the element count overflows int64 at shape[" + std::to_string(i) +
             "] = " + std::to_string(shape[i]);
    });
    return false;
  }
  span.count = count;
  if (reachOverflowAt >= 0) {  // IMP-10
    const int32_t i = reachOverflowAt;
    sink.Report(Rule::kOverflow, [&] {
      return "strides[" + std::to_string(i) + "] = " + std::to_string(strides[i]) + " with shape[" +
             std::to_string(i) + "] = " + std::to_string(shape[i]) + " reaches past int64";
    });
    return false;
  }
  int64_t elements = 0;
  // elements - lo, not elements + -lo: lo may be INT64_MIN, whose negation overflows.
  if (AddOverflows(hi, 1, &elements) || SubOverflows(elements, lo, &elements)) {  // IMP-10
    sink.Report(Rule::kOverflow, [] { return std::string("the layout's extent overflows int64"); });
    return false;
  }
  const int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;
  if (IsPackedSubByte(dtype, flags)) {  // IMP-13: bits * count, rounded up to bytes
    int64_t lowBits = 0;
    int64_t bits = 0;
    if (MulOverflows(lo, elementBits, &lowBits) || MulOverflows(elements, elementBits, &bits)) {
      sink.Report(Rule::kOverflow,
                  [] { return std::string("the layout's extent in bits overflows int64"); });
      return false;
    }
    if (lowBits % 8 != 0) {  // IMP-13, CONF-SUBBYTE-BOUNDARY
      sink.Report(Rule::kSubbyteBoundary, [&] {
        return "with packed " + DtypeText(dtype) +
               " elements the lowest reachable element does not start on a byte boundary";
      });
      return false;
    }
    span.low = lowBits / 8;
    span.bytes = bits / 8 + (bits % 8 != 0);
    *out = span;
    return true;
  }
  const int64_t itemBytes = (elementBits + 7) / 8;
  if (MulOverflows(lo, itemBytes, &span.low) ||
      MulOverflows(elements, itemBytes, &span.bytes)) {  // IMP-10
    sink.Report(Rule::kOverflow,
                [] { return std::string("the layout's extent in bytes overflows int64"); });
    return false;
  }
  *out = span;
  return true;
}

template <class Sink>
bool CheckData(Sink& sink, const void* data, const ByteSpan& span) {
  if (!DataGiven(data, span.count)) {  // IMP-11, CONF-DATA-NULL
    sink.Report(Rule::kDataNull, [&] {
      return "data is NULL but the tensor has " + std::to_string(span.count) + " elements";
    });
    return false;
  }
  if (span.count == 0) {
    if (data != nullptr) {  // IMP-11, CONF-DATA-ZERO-SIZE: accepted
      sink.Report(Rule::kDataZeroSize, [&] {
        return "data is " + Hex(reinterpret_cast<uintptr_t>(data)) +
               " for a tensor with no elements; the header says it should be NULL";
      });
    }
    return false;
  }
  return true;
}

template <class Sink>
bool CheckByteOffset(Sink& sink, uint64_t byte_offset, const ByteSpan& span, int64_t* start) {
  if (!StartOf(byte_offset, span.low, start)) {  // IMP-10
    sink.Report(Rule::kOverflow, [&] {
      return byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? "byte_offset " + std::to_string(byte_offset) + " overflows int64"
                 : std::string("byte_offset plus the layout overflows int64");
    });
    return false;
  }
  return true;
}

template <class Sink>
bool CheckAddress(Sink& sink, uintptr_t base, uint64_t byte_offset, int64_t start,
                  const ByteSpan& span, uintptr_t* pointer, const char* base_name) {
  if (!AddressRangeValid(base, start, span.bytes, pointer)) {  // IMP-10
    sink.Report(Rule::kOverflow, [&] {
      return std::string(base_name) + " " + Hex(base) + " with byte_offset " +
             std::to_string(byte_offset) +
             " and this layout wraps around the address space (dlbridge's addresses are int64: "
             "the first reachable byte must lie in [1, INT64_MAX], the range must not wrap)";
    });
    return false;
  }
  return true;
}

template <class Sink>
void CheckAlignment(Sink& sink, uintptr_t base, uint64_t byte_offset) {
  if (base % 256 != 0) {  // CONF-ALIGN
    sink.Report(Rule::kAlign, [&] {
      return "data " + Hex(base) + " is not 256-byte aligned (byte_offset " +
             std::to_string(byte_offset) + ")";
    });
  }
}

}  // namespace detail
}  // namespace dlbridge
