/// @file
/// What a conformance check reports: a Finding, with its Severity. A value header of its own,
/// below both the checker (dlbridge/checker.h) and the rules that produce findings, so that
/// neither has to include the other.
#pragma once

#include <string>

#include "dlbridge/export.h"

namespace dlbridge {

/// How bad a finding is.
enum class Severity : int {
  kViolation = 0,  ///< The header forbids it; a consumer may misread or crash on it.
  kWarning = 1,    ///< Allowed but risky, or outside what this checker can verify.
  kNote = 2,       ///< Allowed; worth knowing (e.g. the 256-byte alignment the header asks for).
};

/// "violation", "warning" or "note".
DLBRIDGE_API const char* SeverityName(Severity severity) noexcept;

/// One departure from the specification.
struct Finding {
  std::string rule;     ///< The rule's ID, one of the CONF-* of spec/conformance.md.
  Severity severity;    ///< How bad it is.
  std::string message;  ///< The field, the value found and what the header asks for.
};

}  // namespace dlbridge
