// Error, its code names, and the one error funnel (detail::Fail).
#include "dlbridge/error.h"

#include <utility>

#include "core/error_internal.h"

namespace dlbridge {

Error::Error(ErrorCode code, std::string message)
    : code_(code), message_(std::move(message)), reason_size_(message_.size()) {}

Error::Error(ErrorCode code, std::string reason, ErrorAdvice advice, std::string advice_detail)
    : code_(code),
      advice_(advice),
      message_(std::move(reason)),
      reason_size_(message_.size()),
      advice_detail_(std::move(advice_detail)) {
  message_ += ErrorAdviceText(advice_, advice_detail_);
}

const char* ErrorAdviceName(ErrorAdvice advice) noexcept {
  switch (advice) {
    case ErrorAdvice::kNone: return "kNone";
    case ErrorAdvice::kUseVersioned: return "kUseVersioned";
    case ErrorAdvice::kGiveDeviceId: return "kGiveDeviceId";
  }
  return "unknown";
}

// The one place the C++ wording of each advice is written (see PY-42).
std::string ErrorAdviceText(ErrorAdvice advice, const std::string& detail) {
  switch (advice) {
    case ErrorAdvice::kNone: return std::string();
    case ErrorAdvice::kUseVersioned: return "; use ToDLPackVersioned";
    case ErrorAdvice::kGiveDeviceId:
      return "; set Tensor::device (e.g. {" + (detail.empty() ? std::string("type") : detail) +
             ", 0}) or ExportOptions::device_id";
  }
  return std::string();
}

// Every code has its name (GPU-9 for the runtime codes; no default, so -Wswitch sees a new one).
const char* ErrorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "kInvalidArgument";
    case ErrorCode::kInvalidMemorySpace: return "kInvalidMemorySpace";
    case ErrorCode::kInvalidDescriptor: return "kInvalidDescriptor";
    case ErrorCode::kUnsupportedVersion: return "kUnsupportedVersion";
    case ErrorCode::kInvalidShape: return "kInvalidShape";
    case ErrorCode::kInvalidStrides: return "kInvalidStrides";
    case ErrorCode::kInvalidDtype: return "kInvalidDtype";
    case ErrorCode::kInvalidFlags: return "kInvalidFlags";
    case ErrorCode::kUnsupportedDevice: return "kUnsupportedDevice";
    case ErrorCode::kDeviceMismatch: return "kDeviceMismatch";
    case ErrorCode::kMissingDeviceId: return "kMissingDeviceId";
    case ErrorCode::kMissingContext: return "kMissingContext";
    case ErrorCode::kNullData: return "kNullData";
    case ErrorCode::kOutOfBounds: return "kOutOfBounds";
    case ErrorCode::kOverflow: return "kOverflow";
    case ErrorCode::kReadOnly: return "kReadOnly";
    case ErrorCode::kOutOfMemory: return "kOutOfMemory";
    case ErrorCode::kRuntimeUnavailable: return "kRuntimeUnavailable";
    case ErrorCode::kDoubleRelease: return "kDoubleRelease";
    case ErrorCode::kStubLibrary: return "kStubLibrary";
    case ErrorCode::kNoDevice: return "kNoDevice";
    case ErrorCode::kRuntimeNotInitialized: return "kRuntimeNotInitialized";
    case ErrorCode::kUnknownPointer: return "kUnknownPointer";
    case ErrorCode::kNoHold: return "kNoHold";
    case ErrorCode::kUnsupportedDtype: return "kUnsupportedDtype";
  }
  return "unknown";
}

namespace detail {

void Fail(ErrorCode code, const std::string& message) { throw Error(code, message); }

void Fail(ErrorCode code, const std::string& reason, ErrorAdvice advice,
          const std::string& advice_detail) {
  throw Error(code, reason, advice, advice_detail);
}

}  // namespace detail

}  // namespace dlbridge
