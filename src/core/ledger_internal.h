// Ledger hooks. With DLBRIDGE_LEDGER undefined every hook is an empty inline function (or
// a constant `true`), so the hooks cost nothing in ordinary builds.
#pragma once

#include <cstdlib>

// DLBRIDGE_ASAN: this build runs under AddressSanitizer (GCC's __SANITIZE_ADDRESS__ or clang's
// feature test): the ledger poisons its quarantine, and no export block is reused (see LT-8).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLBRIDGE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(DLBRIDGE_ASAN)
#define DLBRIDGE_ASAN 1
#endif

namespace dlbridge {
namespace detail {

#if defined(DLBRIDGE_LEDGER)
/// A descriptor starts holding (owner or release).
void LedgerHoldSet() noexcept;
/// A descriptor stops holding without running the release: TakeRelease, export, disarm.
void LedgerHoldTaken() noexcept;
/// A descriptor drops its hold (runs the release or drops the owner).
void LedgerHoldDropped() noexcept;
/// Registers a new export block before anything depends on it; false when the ledger could
/// not allocate its entry (the export then fails with kOutOfMemory, the hold kept).
bool LedgerExportCreated(const void* block) noexcept;
/// Called first by a dlbridge deleter: true (and the block is forgotten) when `block` is a
/// live export; false, with a report recorded, when it is not: the deleter must return
/// without touching `block`.
bool LedgerExportDeleting(const void* block, bool legacy) noexcept;
/// Frees a std::malloc'd export block (a DLManagedTensor one when `legacy`) whose deleter
/// ran. Ledger builds keep the most recent ones allocated, unchanged, in a quarantine first,
/// so that a consumer's second `m->deleter(m)` reads live memory and reaches
/// LedgerExportDeleting; the oldest is freed when the quarantine is full. Under ASan the
/// quarantined managed struct is poisoned except its `deleter`, so any other read of a
/// deleted export is still reported.
void LedgerFreeExport(void* block, bool legacy) noexcept;
#else
inline void LedgerHoldSet() noexcept {}
inline void LedgerHoldTaken() noexcept {}
inline void LedgerHoldDropped() noexcept {}
inline bool LedgerExportCreated(const void*) noexcept { return true; }
inline bool LedgerExportDeleting(const void*, bool) noexcept { return true; }
inline void LedgerFreeExport(void* block, bool) noexcept { std::free(block); }
#endif

// A moved hold (move construction, move assignment) changes no count: one descriptor stops
// holding as another starts. Move assignment first drops the target's own hold, counted.

}  // namespace detail
}  // namespace dlbridge
