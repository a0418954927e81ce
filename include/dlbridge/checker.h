/// @file
/// The DLPack conformance checker: reads a producer's managed tensor and reports every way it
/// departs from the DLPack header, without consuming it. spec/conformance.md gives each rule
/// (CONF-*) with the test that proves the checker catches it.
#pragma once

#include <string>
#include <vector>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"
#include "dlbridge/findings.h"

namespace dlbridge {

/// One rule the checker knows, for reports that list passing rules too.
struct CheckerRule {
  const char* id;       ///< "CONF-..."
  Severity severity;    ///< The severity it is reported with (see the rule's text).
  const char* summary;  ///< What it checks, one line.
};

/// Every rule CheckDLPack can report, in a fixed order. Static storage; never null.
DLBRIDGE_API const CheckerRule* CheckerRules(int* count) noexcept;

/// Checks a versioned tensor against the DLPack header's rules. Non-consuming: it never calls
/// the deleter, never writes, and never reads past `flags` when the major version is not 1
/// (the header makes everything after it undefined then). It reads at most
/// TensorLayout::kMaxDims shape and stride entries (a larger ndim is a finding). Pointers are
/// read but never dereferenced except shape and strides. An empty result means conforming.
/// Throws nothing but std::bad_alloc.
DLBRIDGE_API std::vector<Finding> CheckDLPack(const DLManagedTensorVersioned* managed);

/// The same for a legacy (pre-1.0) tensor: no version and no flags to check; NULL strides are
/// allowed (C-contiguous).
DLBRIDGE_API std::vector<Finding> CheckDLPack(const DLManagedTensor* managed);

/// Whether any finding is a violation.
DLBRIDGE_API bool HasViolation(const std::vector<Finding>& findings) noexcept;

}  // namespace dlbridge
