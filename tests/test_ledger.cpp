// The ledger (spec/reliability.md LED-*). Checks that need the ledger skip, saying so, in
// builds without DLBRIDGE_LEDGER; LED-5 is the one check for those builds.
#include <doctest/doctest.h>

#include <memory>
#include <set>
#include <type_traits>

#include "counting.h"

using dlbridge::GetLedgerCounts;
using dlbridge::LedgerCounts;
using dlbridge::LedgerEnabled;
using dlbridge::MemoryDescriptor;
using dlbridge::Tensor;
using namespace dlbtest;

namespace {

// Counts relative to the start of a test case.
struct Delta {
  LedgerCounts start = GetLedgerCounts();
  int64_t Holds() const { return GetLedgerCounts().descriptor_holds - start.descriptor_holds; }
  int64_t Exports() const { return GetLedgerCounts().exports - start.exports; }
};

}  // namespace

TEST_CASE("LED-2 the ledger counts descriptor holds: set, moved, taken, dropped") {
  if (!LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is off in this build: nothing is counted");
    return;
  }
  Delta d;
  ReleaseCounter counter;
  ReleaseCounter other;
  {
    MemoryDescriptor a;
    CHECK(d.Holds() == 0);
    a.SetRelease(&ReleaseCounter::Release, &counter);
    CHECK(d.Holds() == 1);
    a.SetRelease(&ReleaseCounter::Release, &other);  // drops the first, holds the second
    CHECK(d.Holds() == 1);
    MemoryDescriptor b(std::move(a));  // a move changes no count
    CHECK(d.Holds() == 1);
    MemoryDescriptor c;
    c.SetOwner(std::make_shared<int>(1));
    CHECK(d.Holds() == 2);
    c = std::move(b);  // drops c's owner, takes b's release
    CHECK(d.Holds() == 1);
    dlbridge::ReleaseFunction release = nullptr;
    void* context = nullptr;
    REQUIRE(c.TakeRelease(release, context));
    CHECK(d.Holds() == 0);
    release(context);
    c.SetOwner(std::make_shared<int>(2));
    REQUIRE(c.TakeRelease(release, context));  // owner form: a small block carries it
    CHECK(d.Holds() == 0);
    release(context);
    c.SetOwner(std::make_shared<int>(3));
    c.SetOwner(nullptr);  // clearing drops
    CHECK(d.Holds() == 0);
    a.SetRelease(&ReleaseCounter::Release, &counter);
    CHECK(d.Holds() == 1);
  }
  CHECK(d.Holds() == 0);
  CHECK(counter.calls + other.calls == 3);  // the replaced one, the taken one, the last one
}

TEST_CASE("LED-3 the ledger counts exports until their deleter runs, and imports as holds") {
  if (!LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is off in this build: nothing is counted");
    return;
  }
  Delta d;
  Buffer buf;
  ReleaseCounter counter;
  DLManagedTensorVersioned* v = dlbridge::ToDLPackVersioned(HostTensor(buf, counter, F32({4})));
  CHECK(d.Holds() == 0);  // the hold moved into the export
  CHECK(d.Exports() == 1);
  DLManagedTensor* l = dlbridge::ToDLPack(HostTensor(buf, counter, F32({2, 2})));
  CHECK(d.Exports() == 2);
  {
    // RT-6: the import of an own export takes its hold back, and the export ends there.
    Tensor imported = dlbridge::FromDLPack(v);
    CHECK(d.Holds() == 1);
    CHECK(d.Exports() == 1);
  }
  {
    Versioned h(buf.bytes, {4});  // another producer's tensor: the import holds it
    Tensor imported = dlbridge::FromDLPack(&h.managed);
    CHECK(d.Holds() == 1);
    CHECK(d.Exports() == 1);
    CHECK(h.deletes == 0);
  }
  CHECK(d.Holds() == 0);
  CHECK(d.Exports() == 1);
  l->deleter(l);
  CHECK(d.Exports() == 0);
  CHECK(counter.calls == 2);
  // A failed export counts nothing new; the Tensor keeps its (counted) hold.
  Tensor big = HostTensor(buf, counter, F32({5000}));
  CHECK(d.Holds() == 1);
  CHECK_THROWS_AS(dlbridge::ToDLPackVersioned(std::move(big)), dlbridge::Error);
  CHECK(d.Holds() == 1);
  CHECK(d.Exports() == 0);
}

TEST_CASE_TEMPLATE("LED-4 a second deleter call on a dlbridge export is reported and ignored", M,
                   DLManagedTensorVersioned, DLManagedTensor) {
  if (!LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is off in this build: a second call would be a double free");
    return;
  }
  constexpr bool kLegacy = std::is_same_v<M, DLManagedTensor>;
  dlbridge::ClearDoubleDeleteReports();
  Buffer buf;
  ReleaseCounter counter;
  M* m = nullptr;
  if constexpr (kLegacy) {
    m = dlbridge::ToDLPack(HostTensor(buf, counter, F32({4})));
  } else {
    m = dlbridge::ToDLPackVersioned(HostTensor(buf, counter, F32({4})));
  }
  auto deleter = m->deleter;  // read before the first call: m is freed by it
  deleter(m);
  CHECK(counter.calls == 1);
  deleter(m);  // a consumer's bug: must not free again, nor release again
  CHECK(counter.calls == 1);
  CHECK(GetLedgerCounts().double_deletes == 1);
  auto reports = dlbridge::GetDoubleDeleteReports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].managed == reinterpret_cast<uintptr_t>(m));
  CHECK(reports[0].legacy == kLegacy);
  CHECK(reports[0].freed_before);

  // A dlbridge deleter handed something dlbridge never exported is reported the same way.
  HandBuilt<M> stranger(buf.bytes, {4});
  deleter(&stranger.managed);
  CHECK(stranger.deletes == 0);
  CHECK(GetLedgerCounts().double_deletes == 2);
  REQUIRE(dlbridge::GetDoubleDeleteReports().size() == 2);
  CHECK_FALSE(dlbridge::GetDoubleDeleteReports()[1].freed_before);  // not one of ours
  dlbridge::ClearDoubleDeleteReports();
  CHECK(GetLedgerCounts().double_deletes == 0);
  CHECK(dlbridge::GetDoubleDeleteReports().empty());
}

TEST_CASE_TEMPLATE(
    "LED-6 the common m->deleter(m); m->deleter(m) is caught: deleted blocks are quarantined", M,
    DLManagedTensorVersioned, DLManagedTensor) {
  if (!LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is off in this build: a second call would be a double free");
    return;
  }
  constexpr bool kLegacy = std::is_same_v<M, DLManagedTensor>;
  dlbridge::ClearDoubleDeleteReports();
  Buffer buf;
  ReleaseCounter counter;
  auto exportOne = [&] {
    if constexpr (kLegacy) {
      return dlbridge::ToDLPack(HostTensor(buf, counter, F32({4})));
    } else {
      return dlbridge::ToDLPackVersioned(HostTensor(buf, counter, F32({4})));
    }
  };
  M* m = exportOne();
  m->deleter(m);
  m->deleter(m);  // the idiom: reads m->deleter from the block the first call deleted
  CHECK(counter.calls == 1);
  auto reports = dlbridge::GetDoubleDeleteReports();
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].managed == reinterpret_cast<uintptr_t>(m));
  CHECK(reports[0].freed_before);
  // While quarantined, no new export reuses a deleted block's address (malloc would hand the
  // same block straight back), so a late second call cannot free someone else's export.
  std::set<uintptr_t> seen{reinterpret_cast<uintptr_t>(m)};
  for (int i = 0; i < 16; ++i) {
    M* next = exportOne();
    CHECK(seen.insert(reinterpret_cast<uintptr_t>(next)).second);
    next->deleter(next);
  }
  CHECK(counter.calls == 17);
  m->deleter(m);  // still quarantined: still seen
  CHECK(GetLedgerCounts().double_deletes == 2);
  dlbridge::ClearDoubleDeleteReports();
}

TEST_CASE("LED-5 without the ledger every count is zero and nothing is reported") {
  if (LedgerEnabled()) {
    MESSAGE("DLBRIDGE_LEDGER is on in this build: LED-2..LED-4 check the counts");
    return;
  }
  Buffer buf;
  ReleaseCounter counter;
  Tensor t = HostTensor(buf, counter, F32({4}));
  DLManagedTensorVersioned* m = dlbridge::ToDLPackVersioned(std::move(t));
  const LedgerCounts counts = GetLedgerCounts();
  CHECK(counts.descriptor_holds == 0);
  CHECK(counts.exports == 0);
  CHECK(counts.double_deletes == 0);
  CHECK(dlbridge::GetDoubleDeleteReports().empty());
  m->deleter(m);
  CHECK(counter.calls == 1);
}
