/// @file
/// The one error type dlbridge throws for bad input, with a machine-readable code.
#pragma once

#include <exception>
#include <string>

#include "dlbridge/export.h"

namespace dlbridge {

/// Why an operation failed. The C API returns these values negated.
enum class ErrorCode : int {
  kInvalidArgument = 1,         ///< A null or malformed argument (e.g. a null tensor pointer).
  kInvalidMemorySpace = 2,      ///< A memory space name that is not host/cuda/hip/level_zero.
  kInvalidDescriptor = 3,       ///< Negative size, or null pointer with bytes.
  kUnsupportedVersion = 4,      ///< A DLPack major version other than 1.
  kInvalidShape = 5,            ///< ndim out of range, null shape, negative extent.
  kInvalidStrides = 6,          ///< Null strides where DLPack >= 1.2 forbids them.
  kInvalidDtype = 7,            ///< Bits that do not match the dtype code, lanes 0, a bad name.
  kInvalidFlags = 8,            ///< Flag bits this build does not know, or a forbidden combination.
  kUnsupportedDevice = 9,       ///< A device type dlbridge does not map (OpenCL, Vulkan, ...).
  kDeviceMismatch = 10,         ///< A device that contradicts the memory space or the pointer.
  kMissingDeviceId = 11,        ///< A GPU export without a device ordinal.
  kMissingContext = 12,         ///< Level Zero without its context, Metal without a resolver.
  kNullData = 13,               ///< Null data for a tensor with elements.
  kOutOfBounds = 14,            ///< The layout reaches outside the described buffer.
  kOverflow = 15,               ///< Extent, stride or offset arithmetic overflows int64.
  kReadOnly = 16,               ///< Read-only memory where writable memory is required.
  kOutOfMemory = 17,            ///< The export block could not be allocated.
  kRuntimeUnavailable = 18,     ///< A GPU runtime is needed but not installed or usable.
  kDoubleRelease = 19,          ///< A dlbridge deleter called a second time (ledger builds).
  kStubLibrary = 20,            ///< The CUDA toolkit's link stub was loaded instead of the driver.
  kNoDevice = 21,               ///< The GPU runtime is installed but reports no device or driver.
  kRuntimeNotInitialized = 22,  ///< The GPU runtime is installed but could not be initialised.
  kUnknownPointer = 23,  ///< The runtime does not know the pointer (not from that runtime/context).
  kNoHold =
      24,  ///< Export of a descriptor that holds nothing without ExportOptions::allow_unowned.
  kUnsupportedDtype =
      25,  ///< A dtype code this build does not know (well-formed, not exchangeable).
};

/// Short stable name of a code, e.g. "kOutOfBounds".
DLBRIDGE_API const char* ErrorCodeName(ErrorCode code) noexcept;

/// Bad input. The message names the field, the value given, and what would be accepted.
class DLBRIDGE_API Error : public std::exception {
 public:
  /// An error with its code and its message (what() returns the message).
  Error(ErrorCode code, std::string message);
  /// Why the operation failed.
  ErrorCode code() const noexcept { return code_; }
  /// The message: the field, the value given and what would be accepted.
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  ErrorCode code_;
  std::string message_;
};

}  // namespace dlbridge
