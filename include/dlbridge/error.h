/// @file
/// The one error type dlbridge throws (bad input, an unusable GPU runtime, a failed
/// allocation), with a machine-readable code.
#pragma once

#include <cstddef>
#include <exception>
#include <string>

#include "dlbridge/export.h"

namespace dlbridge {

/// Why an operation failed. The C API returns these values negated.
enum class ErrorCode : int {
  kInvalidArgument = 1,  ///< A null or malformed argument (e.g. a null tensor pointer).
  /// A space name or MemorySpace value that is not host, cuda, hip or level_zero; or host
  /// where a runtime must be asked (QueryPointer).
  kInvalidMemorySpace = 2,
  kInvalidDescriptor = 3,   ///< Negative size, or null pointer with bytes.
  kUnsupportedVersion = 4,  ///< A DLPack major version other than 1.
  kInvalidShape = 5,        ///< ndim out of range, null shape, negative extent.
  /// Null strides where DLPack >= 1.2 forbids them, a stride count other than ndim, or a
  /// packed sub-byte layout whose lowest element is not on a byte boundary.
  kInvalidStrides = 6,
  /// Bits that do not match the dtype code, lanes 0, a bad name (ParseDtype), or a
  /// Tensor::Data<T> whose T is not the tensor's dtype.
  kInvalidDtype = 7,
  /// Flag bits this build does not know, or padded sub-byte elements in a legacy export.
  kInvalidFlags = 8,
  /// A device type dlbridge does not map (OpenCL, Vulkan, ...), a Metal buffer without shared
  /// storage, or host access to memory the CPU cannot read (Tensor::Data, CopyToHost).
  kUnsupportedDevice = 9,
  kDeviceMismatch = 10,   ///< A device that contradicts the space or the pointer; a bad id.
  kMissingDeviceId = 11,  ///< A GPU export without a device ordinal, its runtime unable to say.
  kMissingContext = 12,   ///< Level Zero without its context, Metal without a resolver.
  kNullData = 13,         ///< Null data for a tensor with elements.
  kOutOfBounds = 14,      ///< The layout reaches outside the described (or Metal) buffer.
  /// Extent, stride or offset arithmetic overflows int64, or an address range wraps or
  /// reaches 2^63.
  kOverflow = 15,
  /// Read-only memory where writable memory is required, or in a legacy export (which cannot
  /// say read-only).
  kReadOnly = 16,
  /// An allocation failed: an export block, an owner block, a host tensor, a layout's
  /// dimensions, a ledger entry.
  kOutOfMemory = 17,
  kRuntimeUnavailable = 18,  ///< A GPU runtime is needed but not installed or usable.
  /// Reserved (frozen in the C ABI); nothing returns it. A deleter cannot fail, so ledger
  /// builds record a second call in GetDoubleDeleteReports (dlbridge/ledger.h) instead.
  kDoubleRelease = 19,
  kStubLibrary = 20,            ///< The CUDA toolkit's link stub was loaded instead of the driver.
  kNoDevice = 21,               ///< The GPU runtime is installed but reports no device or driver.
  kRuntimeNotInitialized = 22,  ///< The GPU runtime is installed but could not be initialised.
  kUnknownPointer = 23,  ///< The runtime does not know the pointer (not from that runtime/context).
  /// Export of a descriptor that holds nothing without ExportOptions::allow_unowned.
  kNoHold = 24,
  /// A dtype code this build does not know (well-formed, not exchangeable).
  kUnsupportedDtype = 25,
};

/// Short stable name of a code, e.g. "kOutOfBounds".
DLBRIDGE_API const char* ErrorCodeName(ErrorCode code) noexcept;

/// What the caller can do about an error, as a value rather than as words in the message: the
/// C++ message ends with the C++ wording of it (ErrorAdviceText) and the Python module writes
/// its own wording from the same value (see PY-42 in spec/python.md), so no advice depends on the
/// text of a message.
enum class ErrorAdvice : int {
  kNone = 0,  ///< No advice of this kind (the message may still say what to do in words).
  /// Export a versioned tensor (ToDLPackVersioned): the legacy DLManagedTensor cannot say
  /// what this one needs.
  kUseVersioned = 1,
  /// Give the GPU ordinal (Tensor::device or ExportOptions::device_id); Error::advice_detail()
  /// names the device type, e.g. "kDLCUDA".
  kGiveDeviceId = 2,
};

/// Short stable name of an advice, e.g. "kUseVersioned" ("kNone" for none).
DLBRIDGE_API const char* ErrorAdviceName(ErrorAdvice advice) noexcept;

/// The C++ wording of an advice as a message ends with it, e.g. "; use ToDLPackVersioned"
/// ("" for kNone); `detail` is Error::advice_detail().
DLBRIDGE_API std::string ErrorAdviceText(ErrorAdvice advice, const std::string& detail);

/// Why an operation failed. The message names the field, the value given, and what would be
/// accepted.
class DLBRIDGE_API Error : public std::exception {
 public:
  /// An error with its code and its message (what() returns the message), and no advice.
  Error(ErrorCode code, std::string message);
  /// An error whose message is `reason` followed by ErrorAdviceText(advice, advice_detail).
  Error(ErrorCode code, std::string reason, ErrorAdvice advice, std::string advice_detail);
  /// Why the operation failed.
  ErrorCode code() const noexcept { return code_; }
  /// The message: the field, the value given and what would be accepted.
  const char* what() const noexcept override { return message_.c_str(); }
  /// The message without its advice (the whole message when there is none).
  std::string reason() const { return message_.substr(0, reason_size_); }
  /// What the caller can do, as a value (kNone when the message gives no advice of that kind).
  ErrorAdvice advice() const noexcept { return advice_; }
  /// The advice's parameter, e.g. the device type name for kGiveDeviceId; empty otherwise.
  const std::string& advice_detail() const noexcept { return advice_detail_; }

 private:
  ErrorCode code_;
  ErrorAdvice advice_ = ErrorAdvice::kNone;
  std::string message_;
  size_t reason_size_;
  std::string advice_detail_;
};

}  // namespace dlbridge
