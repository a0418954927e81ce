/// @file
/// The ledger: a build option (DLBRIDGE_LEDGER) that counts live holds and catches a second
/// call of a dlbridge export's deleter. spec/reliability.md (LED-*) gives the rules.
#pragma once

#include <cstdint>
#include <vector>

#include "dlbridge/export.h"

namespace dlbridge {

/// What is alive right now, process-wide. All zero when the ledger is not built in.
struct LedgerCounts {
  int64_t descriptor_holds = 0;  ///< MemoryDescriptors holding an owner or a release.
  int64_t exports = 0;           ///< dlbridge's own exported tensors whose deleter has not run.
  int64_t double_deletes = 0;    ///< Reports recorded so far (see GetDoubleDeleteReports).
};

/// One call of a dlbridge deleter on a tensor that is not a live dlbridge export: a second
/// call on the same export, or a call on something dlbridge never exported through that
/// deleter. The call returned without reading or freeing anything.
struct DoubleDeleteReport {
  uintptr_t managed = 0;  ///< The pointer the deleter was called with.
  bool legacy = false;    ///< The DLManagedTensor deleter (true) or the versioned one (false).
};

/// Whether this build of dlbridge keeps the ledger (CMake option DLBRIDGE_LEDGER).
DLBRIDGE_API bool LedgerEnabled() noexcept;

/// The current counts. Thread-safe; each count is exact once concurrent operations finished.
DLBRIDGE_API LedgerCounts GetLedgerCounts() noexcept;

/// A copy of the double-delete reports recorded so far, oldest first (at most 1024 kept;
/// `LedgerCounts::double_deletes` counts them all).
DLBRIDGE_API std::vector<DoubleDeleteReport> GetDoubleDeleteReports();

/// Forgets the reports and sets `double_deletes` back to 0 (tests that provoke reports
/// clear them afterwards). The live counts are untouched.
DLBRIDGE_API void ClearDoubleDeleteReports() noexcept;

}  // namespace dlbridge
