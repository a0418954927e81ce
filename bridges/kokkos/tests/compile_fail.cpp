// Must NOT compile (bridges/kokkos/tests/CMakeLists.txt, KOK-3): a memory space that the
// table does not map has no DLPack device, and the bridge stops the build saying so.
#include "dlbridge/kokkos.h"

struct OpenAccLike {  // what the table reads of a space: its name()
  static constexpr const char* name() { return "OpenACCSpace"; }
};

DLDevice Misuse() { return dlbridge::kokkos::DeviceOf<OpenAccLike>(); }
