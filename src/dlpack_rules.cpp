// The structural DLPack rules (dlpack_rules.h): the dtype table, the flag list, the layout
// arithmetic and every tensor rule, each once, run through a ThrowSink or a CollectSink.
#include "dlpack_rules.h"

#include <cstdio>
#include <limits>
#include <string>

#include "dlbridge/tensor_layout.h"

namespace dlbridge {
namespace detail {

// ---- Sinks ----

void ThrowSink::Throw(ErrorCode code, const std::string& message) const {
  Fail(code, std::string(where_) + ": " + message);
}

void CollectSink::Add(Rule rule, std::string message) {
  const RuleInfo& info = InfoOf(rule);
  const Severity severity = newer_ && info.unknown_value ? Severity::kWarning : info.severity;
  findings_.push_back(Finding{info.conf_id, severity, std::move(message)});
}

// ---- Tables ----

uint64_t KnownFlags() noexcept {
  uint64_t known = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  known |= DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
#endif
  return known;
}

namespace {

struct DtypeRow {
  uint8_t code;
  const char* name;
  uint8_t bits[4];  // accepted widths, 0-terminated
};

// IMP-12. Codes as numbers so the table compiles against any 1.x header; the float8/6/4
// codes arrived with DLPack 1.1 and are known only when the header is at least that.
constexpr DtypeRow kDtypes[] = {
    {0, "int", {8, 16, 32, 64}},
    {1, "uint", {8, 16, 32, 64}},
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

constexpr size_t kDtypeCount = sizeof(kDtypes) / sizeof(kDtypes[0]);
constexpr bool RowsAreIndexedByCode() {
  for (size_t i = 0; i < kDtypeCount; ++i) {
    if (kDtypes[i].code != i) return false;
  }
  return true;
}
static_assert(RowsAreIndexedByCode(), "kDtypes[i] must describe code i: lookups index it");

// On every export and import: a direct index, not a search.
const DtypeRow* FindDtype(uint8_t code) { return code < kDtypeCount ? &kDtypes[code] : nullptr; }

std::string BitsList(const DtypeRow& row) {
  std::string out;
  for (uint8_t b : row.bits) {
    if (b == 0) break;
    if (!out.empty()) out += ", ";
    out += std::to_string(b);
  }
  return out;
}

std::string HeaderVersion() {
  return std::to_string(DLPACK_MAJOR_VERSION) + "." + std::to_string(DLPACK_MINOR_VERSION);
}

}  // namespace

bool IsKnownDtypeCode(uint8_t code) noexcept { return FindDtype(code) != nullptr; }

const char* DtypeCodeName(uint8_t code) noexcept {
  const DtypeRow* row = FindDtype(code);
  return row ? row->name : nullptr;
}

int DtypeCodeCount() noexcept { return static_cast<int>(kDtypeCount); }

bool DtypeBitsValid(uint8_t code, uint8_t bits) noexcept {
  const DtypeRow* row = FindDtype(code);
  if (row == nullptr) return false;
  for (uint8_t b : row->bits) {
    if (b != 0 && b == bits) return true;
  }
  return false;
}

std::string DtypeText(DLDataType dtype) {
  const DtypeRow* row = FindDtype(dtype.code);
  std::string text = row ? row->name : "code" + std::to_string(dtype.code);
  text += std::to_string(dtype.bits);
  if (dtype.lanes != 1) text += "x" + std::to_string(dtype.lanes);
  return text;
}

std::string Hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

bool IsPackedSubByte(DLDataType dtype, uint64_t flags) noexcept {
  const int64_t elementBits = int64_t{dtype.bits} * dtype.lanes;
  if (elementBits % 8 == 0) return false;
#ifdef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
  if (flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) return false;
#else
  (void)flags;
#endif
  return true;
}

// ---- Rules ----

template <class Sink>
bool CheckVersion(Sink& sink, DLPackVersion version) {
  if (version.major != 1) {  // IMP-4, CONF-VERSION-MAJOR
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
  const uint64_t unknown = flags & ~KnownFlags();
  if (unknown != 0) {  // IMP-5, EXP-13, CONF-FLAGS-UNKNOWN
    sink.Report(Rule::kFlagsUnknown, [&] {
      return std::string(field) + " has bits " + Hex(unknown) + " that DLPack " + HeaderVersion() +
             " does not define; known: " + Hex(KnownFlags());
    });
  }
}

template <class Sink>
void CheckDtype(Sink& sink, DLDataType dtype, uint64_t flags) {
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
  if (row != nullptr) {
    if (!DtypeBitsValid(dtype.code, dtype.bits)) {  // IMP-12, CONF-DTYPE-BITS
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
  if (t.ndim < 0) {  // IMP-6, CONF-NDIM
    sink.Report(Rule::kNdimNegative, [&] {
      return "ndim is " + std::to_string(t.ndim) + "; accepted: 0.." +
             std::to_string(TensorLayout::kMaxDims);
    });
    return false;
  }
  if (t.ndim > TensorLayout::kMaxDims) {  // IMP-6, CONF-NDIM: reads stay bounded
    sink.Report(Rule::kNdimLimit, [&] {
      return "ndim is " + std::to_string(t.ndim) + "; accepted: 0.." +
             std::to_string(TensorLayout::kMaxDims) +
             " (dlbridge's bound: shape, strides and the layout are not read)";
    });
    return false;
  }
  if (t.ndim > 0 && t.shape == nullptr) {  // IMP-7, CONF-SHAPE-NULL
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
  if (t.ndim > 0 && t.strides == nullptr) {  // IMP-9, CONF-STRIDES-NULL
    if (!null_strides_allowed) {
      sink.Report(Rule::kStridesNull, [&] {
        return "strides is NULL with ndim " + std::to_string(t.ndim) +
               "; DLPack >= 1.2 requires strides (ImportOptions::allow_null_strides relaxes this)";
      });
    } else {
      sink.Report(Rule::kStridesNullAllowed, [&] {
        return "strides is NULL with ndim " + std::to_string(t.ndim) + " (" +
               (versioned ? "allowed before DLPack 1.2" : "allowed for legacy tensors") +
               ": C-contiguous)";
      });
    }
  }
  return !negative;
}

template <class Sink>
const DeviceTypeInfo* CheckDevice(Sink& sink, DLDevice device) {
  const DeviceTypeInfo* row = FindDeviceType(static_cast<int32_t>(device.device_type));
  if (row == nullptr) {  // IMP-16, CONF-DEVICE-TYPE
    sink.Report(Rule::kDeviceType, [&] {
      return "device_type " + std::to_string(device.device_type) +
             " is unknown to this build (DLPack " + HeaderVersion() +
             "); accepted: kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost, kDLCUDAManaged, "
             "kDLOneAPI (with a context), kDLMetal (with a resolver)";
    });
    return nullptr;
  }
  if (row->id_is_zero && device.device_id != 0) {  // CONF-DEVICE-ID (import: DEV-3 sets 0)
    sink.Report(Rule::kDeviceIdZero, [&] {
      return "device_id is " + std::to_string(device.device_id) + " for " + row->name +
             "; the header sets it to 0 for CPU, pinned and managed memory";
    });
  } else if (!row->id_is_zero && device.device_id < 0) {  // IMP-16, CONF-DEVICE-ID
    sink.Report(Rule::kDeviceIdNegative, [&] {
      return "device_id is " + std::to_string(device.device_id) + " for " + row->name +
             "; accepted: >= 0";
    });
  }
  return row;
}

const int64_t* EffectiveStrides(const DLTensor& t, int64_t* scratch) noexcept {
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
  ByteSpan span;
  for (int32_t i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {  // IMP-11: no elements, nothing is reached, nothing can overflow
      *out = span;
      return true;
    }
  }
  int64_t count = 1;
  for (int32_t i = 0; i < ndim; ++i) {
    if (MulOverflows(count, shape[i], &count)) {  // IMP-10, CONF-OVERFLOW
      sink.Report(Rule::kOverflow, [&] {
        return "the element count overflows int64 at shape[" + std::to_string(i) +
               "] = " + std::to_string(shape[i]);
      });
      return false;
    }
  }
  span.count = count;

  // Lowest and highest element offsets reachable, in elements from element zero.
  int64_t lo = 0;
  int64_t hi = 0;
  for (int32_t i = 0; i < ndim; ++i) {
    int64_t reach = 0;
    if (MulOverflows(strides[i], shape[i] - 1, &reach) ||
        AddOverflows(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {  // IMP-10
      sink.Report(Rule::kOverflow, [&] {
        return "strides[" + std::to_string(i) + "] = " + std::to_string(strides[i]) +
               " with shape[" + std::to_string(i) + "] = " + std::to_string(shape[i]) +
               " reaches past int64";
      });
      return false;
    }
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
  if (span.count == 0) {
    if (data != nullptr) {  // IMP-11, CONF-DATA-ZERO-SIZE: accepted
      sink.Report(Rule::kDataZeroSize, [&] {
        return "data is " + Hex(reinterpret_cast<uintptr_t>(data)) +
               " for a tensor with no elements; the header says it should be NULL";
      });
    }
    return false;
  }
  if (data == nullptr) {  // IMP-11, CONF-DATA-NULL
    sink.Report(Rule::kDataNull, [&] {
      return "data is NULL but the tensor has " + std::to_string(span.count) + " elements";
    });
    return false;
  }
  return true;
}

template <class Sink>
bool CheckByteOffset(Sink& sink, uint64_t byte_offset, const ByteSpan& span, int64_t* start) {
  if (byte_offset > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {  // IMP-10
    sink.Report(Rule::kOverflow,
                [&] { return "byte_offset " + std::to_string(byte_offset) + " overflows int64"; });
    return false;
  }
  if (AddOverflows(static_cast<int64_t>(byte_offset), span.low, start)) {  // IMP-10
    sink.Report(Rule::kOverflow,
                [] { return std::string("byte_offset plus the layout overflows int64"); });
    return false;
  }
  return true;
}

template <class Sink>
bool CheckAddress(Sink& sink, uintptr_t base, uint64_t byte_offset, int64_t start,
                  const ByteSpan& span, uintptr_t* pointer) {
  const uintptr_t first = base + static_cast<uintptr_t>(start);
  const bool wraps = start < 0 ? first > base : first < base;
  // IMP-10: addresses are int64 in dlbridge (and in every framework's Python API), so past
  // INT64_MAX counts as wrapping.
  if (wraps || first == 0 || first + static_cast<uintptr_t>(span.bytes) < first ||
      first > static_cast<uintptr_t>(std::numeric_limits<int64_t>::max())) {
    sink.Report(Rule::kOverflow, [&] {
      return "data " + Hex(base) + " with byte_offset " + std::to_string(byte_offset) +
             " and this layout wraps around the address space";
    });
    return false;
  }
  *pointer = first;
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

// The two sinks the rules run with.
#define DLBRIDGE_INSTANTIATE_RULES(Sink)                                                 \
  template bool CheckVersion<Sink>(Sink&, DLPackVersion);                                \
  template void CheckFlags<Sink>(Sink&, uint64_t, const char*);                          \
  template void CheckDtype<Sink>(Sink&, DLDataType, uint64_t);                           \
  template bool CheckShape<Sink>(Sink&, const DLTensor&, bool, bool);                    \
  template const DeviceTypeInfo* CheckDevice<Sink>(Sink&, DLDevice);                     \
  template bool ComputeSpan<Sink>(Sink&, DLDataType, uint64_t, int32_t, const int64_t*,  \
                                  const int64_t*, ByteSpan*);                            \
  template bool CheckData<Sink>(Sink&, const void*, const ByteSpan&);                    \
  template bool CheckByteOffset<Sink>(Sink&, uint64_t, const ByteSpan&, int64_t*);       \
  template bool CheckAddress<Sink>(Sink&, uintptr_t, uint64_t, int64_t, const ByteSpan&, \
                                   uintptr_t*);                                          \
  template void CheckAlignment<Sink>(Sink&, uintptr_t, uint64_t);
DLBRIDGE_INSTANTIATE_RULES(const ThrowSink)
DLBRIDGE_INSTANTIATE_RULES(CollectSink)
#undef DLBRIDGE_INSTANTIATE_RULES

void CheckFlagsOrThrow(const char* where, uint64_t flags, const char* field) {
  const ThrowSink sink(where);
  CheckFlags(sink, flags, field);
}

void CheckDtypeOrThrow(const char* where, DLDataType dtype) {
  const ThrowSink sink(where);
  CheckDtype(sink, dtype, 0);
}

ByteSpan ComputeSpanOrThrow(const char* where, DLDataType dtype, uint64_t flags, int32_t ndim,
                            const int64_t* shape, const int64_t* strides) {
  const ThrowSink sink(where);
  ByteSpan span;
  ComputeSpan(sink, dtype, flags, ndim, shape, strides, &span);
  return span;
}

}  // namespace detail
}  // namespace dlbridge
