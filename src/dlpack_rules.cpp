// The structural DLPack rules (dlpack_rules.h): the dtype table, the flag list, the layout
// arithmetic and every tensor rule, each once, run through a ThrowSink or a CollectSink.
#include "dlpack_rules.h"

#include <cstdio>
#include <limits>
#include <string>

#include "dlbridge/tensor_layout.h"
#include "dlbridge/testing.h"

namespace dlbridge {
namespace detail {

std::atomic<bool> g_fast_paths{true};

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

const char* DtypeCodeName(uint8_t code) noexcept {
  const DtypeRow* row = FindDtype(code);
  return row ? row->name : nullptr;
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
