// The structural DLPack rules (dlpack_rules.h): the dtype table, the flag list, the layout
// arithmetic and every tensor rule, each once, run through a ThrowSink or a CollectSink.
#include "dlpack/dlpack_rules.h"

#include <atomic>
#include <cstdio>
#include <limits>
#include <string>

#include "dlbridge/device_map.h"
#include "dlbridge/memory_space.h"
#include "dlbridge/tensor_layout.h"
#include "dlpack/export_rules.h"

namespace dlbridge {
namespace detail {

// Declared in dlpack_fast_paths.h, whose recognisers it switches (testing::SetFastPaths,
// src/testing/testing_hooks.cpp).
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

// EXP-13: export checks the tensor's flags and dtype by import's own rules.
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

// ---- The export rules' messages (export_rules.h) ----

void FailNoHold(const char* where) {
  Fail(ErrorCode::kNoHold,
       std::string(where) +
           ": the descriptor holds nothing (no owner, no release), so nothing keeps the "
           "memory alive for the consumer; give it a hold (SetOwner or SetRelease), or set "
           "ExportOptions::allow_unowned if you keep the memory valid until the deleter runs");
}

void FailLegacyFlags(const char* where) {
  Fail(ErrorCode::kReadOnly,
       std::string(where) + ": the tensor is read-only and a legacy DLManagedTensor cannot say so",
       ErrorAdvice::kUseVersioned);
}

void FailLegacyDtype(const char* where, DLDataType dtype) {
  Fail(ErrorCode::kInvalidFlags,
       std::string(where) + ": padded sub-byte " + DtypeText(dtype) +
           " cannot be said in a legacy DLManagedTensor",
       ErrorAdvice::kUseVersioned);
}

void FailOutsideBuffer(const char* where, uint64_t byte_offset, const ByteSpan& span,
                       int64_t size) {
  int64_t start = 0;
  int64_t end = 0;
  const bool overflow =
      !StartOf(byte_offset, span.low, &start) || AddOverflows(start, span.bytes, &end);
  Fail(ErrorCode::kOutOfBounds,
       std::string(where) + ": the layout reaches bytes [" +
           (overflow ? std::string("overflow")
                     : std::to_string(start) + ", " + std::to_string(end)) +
           ") from the pointer (byte offset " + std::to_string(byte_offset) +
           ") but the descriptor describes [0, " + std::to_string(size) + ")");
}

void FailDeviceLabel(const char* where, DeviceLabel label, DLDevice given, MemorySpace space,
                     int32_t option_id, DLDevice resolved) {
  switch (label) {
    case DeviceLabel::kTypeContradictsSpace:
      Fail(ErrorCode::kDeviceMismatch,
           std::string(where) + ": the tensor's device type " + std::to_string(given.device_type) +
               " (" + DeviceTypeName(given.device_type) + ") contradicts memory space \"" +
               MemorySpaceName(space) + "\"; leave it 0 to derive it from the space");
    case DeviceLabel::kIdContradictsOption:
      Fail(ErrorCode::kDeviceMismatch,
           std::string(where) + ": ExportOptions::device_id " + std::to_string(option_id) +
               " contradicts the tensor's device id " + std::to_string(given.device_id));
    case DeviceLabel::kIdNotZero:
    case DeviceLabel::kResolved:  // not a failure; never passed
      break;
  }
  Fail(ErrorCode::kDeviceMismatch, std::string(where) + ": device_id " +
                                       std::to_string(resolved.device_id) + " for " +
                                       DeviceTypeName(resolved.device_type) +
                                       "; DLPack requires device_id 0 for this device type");
}

}  // namespace detail
}  // namespace dlbridge
