// Must NOT compile: DataTypeOf of a type DLPack cannot name stops the build with a
// static_assert, and the compiler's note names the type (tests/CMakeLists.txt, HLP-10).
#include <dlbridge/dtype.h>

struct NotADlpackElement {
  int x;
};

DLDataType Refused() { return dlbridge::DataTypeOf<NotADlpackElement>(); }
