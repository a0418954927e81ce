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
  int64_t descriptor_holds = 0;     ///< MemoryDescriptors holding an owner or a release.
  int64_t exports = 0;              ///< dlbridge's own exported tensors whose deleter has not run.
  int64_t double_deletes = 0;       ///< Reports recorded so far (see GetDoubleDeleteReports).
  int64_t callback_exceptions = 0;  ///< CallbackExceptionCount() (dlbridge/callbacks.h).
};

/// One call of a dlbridge deleter on a tensor that is not a live dlbridge export: a second
/// call on the same export, or a call on something dlbridge never exported through that
/// deleter. The call returned without reading or freeing anything.
///
/// Which second calls are seen (spec/reliability.md, see LED-6): the ledger keeps the 256
/// most recently deleted export blocks of the default allocator allocated and unchanged, so
/// the common `m->deleter(m); m->deleter(m);` reads live memory and is reported with
/// `freed_before` true. A second call after 256 newer deletes, or on an export whose
/// ExportAllocator freed it, reads freed memory in the caller before dlbridge runs: the
/// ledger cannot make that defined, and may not see it.
struct DoubleDeleteReport {
  uintptr_t managed = 0;      ///< The pointer the deleter was called with.
  bool legacy = false;        ///< The DLManagedTensor deleter (true) or the versioned one (false).
  bool freed_before = false;  ///< A dlbridge export whose deleter already ran (quarantined).
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
