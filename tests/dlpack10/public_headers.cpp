// Compiled against a DLPack 1.0-level header (tests/dlpack10/make_header.cmake): every public
// header must build there, with later minors' features behind #if.
#include <dlbridge/dlbridge.h>
#include <dlbridge/dlbridge_c.h>

static_assert(DLPACK_MINOR_VERSION == 0, "this test must see the 1.0-level header");

int main() { return dlbridge::TensorLayout().Ndim(); }
