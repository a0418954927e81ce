// The ledger (DLBRIDGE_LEDGER builds): live-hold counts and the set of live export blocks
// that lets a dlbridge deleter recognise a second call. Without the option only the public
// functions remain, answering "disabled" and zeros.
#include "dlbridge/ledger.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <new>
#include <unordered_set>
#include <vector>

#include "ledger_internal.h"

namespace dlbridge {

#if defined(DLBRIDGE_LEDGER)
namespace {

constexpr size_t kMaxReports = 1024;

std::atomic<int64_t> g_holds{0};
std::atomic<int64_t> g_exports{0};
std::atomic<int64_t> g_double_deletes{0};

struct LedgerState {
  std::mutex mutex;
  std::unordered_set<uintptr_t> live;  // export blocks whose deleter has not run
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
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    // THR-7: one erase under the lock, so of two racing calls exactly one frees the export.
    if (state.live.erase(key) == 1) {
      g_exports.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
    // LED-4: a second call (or one on a block that was never ours) is reported and ignored.
    if (state.reports.size() < kMaxReports) {
      try {
        state.reports.push_back(DoubleDeleteReport{key, legacy});
      } catch (...) {  // std::bad_alloc: the count below still records it
      }
    }
    g_double_deletes.fetch_add(1, std::memory_order_relaxed);
  }
  std::fprintf(stderr,
               "dlbridge ledger: %s deleter called on %p, which is not a live dlbridge export "
               "(deleted twice?); ignored\n",
               legacy ? "DLManagedTensor" : "DLManagedTensorVersioned", block);
  return false;
}

}  // namespace detail

bool LedgerEnabled() noexcept { return true; }

LedgerCounts GetLedgerCounts() noexcept {
  LedgerCounts counts;
  counts.descriptor_holds = g_holds.load(std::memory_order_relaxed);
  counts.exports = g_exports.load(std::memory_order_relaxed);
  counts.double_deletes = g_double_deletes.load(std::memory_order_relaxed);
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
