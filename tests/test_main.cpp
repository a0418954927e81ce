// doctest's main, plus the ledger's end-of-run check (spec/reliability.md LED-1): in ledger
// builds a run that leaves a descriptor holding, an export undeleted, or an unexpected
// double-delete report fails even when every CHECK passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "dlbridge/ledger.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;
  const dlbridge::LedgerCounts live = dlbridge::GetLedgerCounts();
  if (live.descriptor_holds != 0 || live.exports != 0 || live.double_deletes != 0) {
    std::fprintf(stderr,
                 "LED-1 ledger at exit: %lld descriptor holds, %lld exports, %lld double-delete "
                 "reports; all must be 0\n",
                 static_cast<long long>(live.descriptor_holds),
                 static_cast<long long>(live.exports), static_cast<long long>(live.double_deletes));
    return result != 0 ? result : 1;
  }
  return result;
}
