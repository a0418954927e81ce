// The ledger (DLBRIDGE_LEDGER builds): live-hold counts and the set of live export blocks
// that lets a dlbridge deleter recognise a second call. Without the option only the public
// functions remain, answering "disabled" and zeros.
#include "dlbridge/ledger.h"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ledger_internal.h"
#include "dlbridge/callbacks.h"
#include "dlbridge/dlpack_header.h"

#if defined(DLBRIDGE_ASAN)  // ledger_internal.h
#include <sanitizer/asan_interface.h>
#endif

namespace dlbridge {

#if defined(DLBRIDGE_LEDGER)
namespace {

constexpr size_t kMaxReports = 1024;
constexpr size_t kQuarantine = 256;  // freed export blocks kept allocated (LED-6)

std::atomic<int64_t> g_holds{0};
std::atomic<int64_t> g_exports{0};
std::atomic<int64_t> g_double_deletes{0};

struct LedgerState {
  std::mutex mutex;
  std::unordered_set<uintptr_t> live;                   // export blocks whose deleter has not run
  std::unordered_set<uintptr_t> quarantined;            // deleted blocks not yet freed, and
  std::deque<std::pair<void*, bool>> quarantine_order;  // the same (and legacy), oldest first
  std::vector<DoubleDeleteReport> reports;
};

// Never destroyed: exports may be deleted by other static destructors after main returns.
LedgerState& State() {
  static LedgerState* state = new LedgerState;
  return *state;
}

}  // namespace

namespace detail {

// LED-2: one count of descriptor holds, changed at each hold transition.
void LedgerHoldSet() noexcept { g_holds.fetch_add(1, std::memory_order_relaxed); }
void LedgerHoldTaken() noexcept { g_holds.fetch_sub(1, std::memory_order_relaxed); }
void LedgerHoldDropped() noexcept { g_holds.fetch_sub(1, std::memory_order_relaxed); }

// LED-3: an export counts from its block's registration until its deleter runs.
bool LedgerExportCreated(const void* block) noexcept {
  LedgerState& state = State();
  try {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.live.insert(reinterpret_cast<uintptr_t>(block));
  } catch (...) {  // std::bad_alloc
    return false;
  }
  g_exports.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool LedgerExportDeleting(const void* block, bool legacy) noexcept {
  LedgerState& state = State();
  const uintptr_t key = reinterpret_cast<uintptr_t>(block);
  bool freedBefore = false;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    // THR-7: one erase under the lock, so of two racing calls exactly one frees the export.
    if (state.live.erase(key) == 1) {
      g_exports.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
    // LED-4: a second call (or one on a block that was never ours) is reported and ignored.
    // LED-6: a quarantined block is one whose deleter already ran.
    freedBefore = state.quarantined.count(key) == 1;
    if (state.reports.size() < kMaxReports) {
      try {
        state.reports.push_back(DoubleDeleteReport{key, legacy, freedBefore});
      } catch (...) {  // std::bad_alloc: the count below still records it
      }
    }
    g_double_deletes.fetch_add(1, std::memory_order_relaxed);
  }
  std::fprintf(stderr,
               "dlbridge ledger: %s deleter called on %p, which is not a live dlbridge export "
               "(%s); ignored\n",
               legacy ? "DLManagedTensor" : "DLManagedTensorVersioned", block,
               freedBefore ? "its deleter already ran: deleted twice"
                           : "deleted twice long ago, or never a dlbridge export");
  return false;
}

// Under ASan, a quarantined block reads as freed except the one field the common second call
// reads (m->deleter): dlbridge's own reads of a deleted export are still reported.
template <class Managed>
static void PoisonAllButDeleter(void* block, bool poison) noexcept {
#if defined(DLBRIDGE_ASAN)
  auto* bytes = static_cast<char*>(block);
  const size_t deleter = offsetof(Managed, deleter);
  const size_t after = deleter + sizeof(static_cast<Managed*>(nullptr)->deleter);
  if (poison) {
    __asan_poison_memory_region(bytes, deleter);
    __asan_poison_memory_region(bytes + after, sizeof(Managed) - after);
  } else {
    __asan_unpoison_memory_region(bytes, sizeof(Managed));
  }
#else
  (void)block;
  (void)poison;
#endif
}

static void Poison(void* block, bool legacy, bool poison) noexcept {
  if (legacy) {
    PoisonAllButDeleter<DLManagedTensor>(block, poison);
  } else {
    PoisonAllButDeleter<DLManagedTensorVersioned>(block, poison);
  }
}

// LED-6: the block stays allocated, its bytes unchanged, until kQuarantine newer ones came.
// While it is here no new export can get its address, so its second deleter call is known.
void LedgerFreeExport(void* block, bool legacy) noexcept {
  LedgerState& state = State();
  std::pair<void*, bool> evicted{nullptr, false};
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    try {
      state.quarantined.insert(reinterpret_cast<uintptr_t>(block));
      try {
        state.quarantine_order.emplace_back(block, legacy);
      } catch (...) {
        state.quarantined.erase(reinterpret_cast<uintptr_t>(block));
        throw;
      }
      Poison(block, legacy, true);
    } catch (...) {  // std::bad_alloc: no quarantine for this one
      std::free(block);
      return;
    }
    if (state.quarantine_order.size() > kQuarantine) {
      evicted = state.quarantine_order.front();
      state.quarantine_order.pop_front();
      state.quarantined.erase(reinterpret_cast<uintptr_t>(evicted.first));
    }
  }
  if (evicted.first != nullptr) {
    Poison(evicted.first, evicted.second, false);
    std::free(evicted.first);
  }
}

}  // namespace detail

bool LedgerEnabled() noexcept { return true; }

LedgerCounts GetLedgerCounts() noexcept {
  LedgerCounts counts;
  counts.descriptor_holds = g_holds.load(std::memory_order_relaxed);
  counts.exports = g_exports.load(std::memory_order_relaxed);
  counts.double_deletes = g_double_deletes.load(std::memory_order_relaxed);
  counts.callback_exceptions = CallbackExceptionCount();
  return counts;
}

std::vector<DoubleDeleteReport> GetDoubleDeleteReports() {
  LedgerState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.reports;
}

void ClearDoubleDeleteReports() noexcept {
  LedgerState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.reports.clear();
  g_double_deletes.store(0, std::memory_order_relaxed);
}

#else  // !DLBRIDGE_LEDGER. LED-5: disabled, every count 0, no reports.

bool LedgerEnabled() noexcept { return false; }
LedgerCounts GetLedgerCounts() noexcept { return LedgerCounts{}; }
std::vector<DoubleDeleteReport> GetDoubleDeleteReports() { return {}; }
void ClearDoubleDeleteReports() noexcept {}

#endif

}  // namespace dlbridge
