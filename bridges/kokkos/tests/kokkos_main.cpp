// The Kokkos bridge tests' main: Kokkos initialised once around doctest (two host threads,
// Kokkos' default host execution space), and the ledger's end-of-run check of
// tests/test_main.cpp (LED-1), which must run after Kokkos dropped its last View.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>
#include <cstdio>

#include "dlbridge/ledger.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int result = 0;
  {
    Kokkos::ScopeGuard kokkos(Kokkos::InitializationSettings().set_num_threads(2));
    result = context.run();
  }
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
