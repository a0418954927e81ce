# PKG-2: compiling a public dlbridge header after a DLPack 0.x header fails, and every error
# printed comes from include/dlbridge/dlpack_header.h: the #error naming the version found and
# what to do, then the include that stops the compiler. EXPECT=accept (libtorch's header is
# 1.x): the same file compiles.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
fresh_dir("${WORK}")
set(_old "${WORK}/old-include")
file(MAKE_DIRECTORY "${_old}/dlpack")

if(CASE MATCHES "^standin")
  # Shaped like DLPack 0.6 (Debian bookworm's libdlpack-dev): the guard and DLPACK_VERSION.
  file(WRITE "${_old}/dlpack/dlpack.h"
       "#ifndef DLPACK_DLPACK_H_\n#define DLPACK_DLPACK_H_\n#define DLPACK_VERSION 60\n"
       "typedef struct { int device_type; int device_id; } DLDevice;\n#endif\n")
  set(_includes "-I${_old}" "-I${INCLUDE}")
  set(_first "")
elseif(CASE MATCHES "^aten_on_path")
  file(COPY "${ATEN}" DESTINATION "${_old}/dlpack")
  set(_includes "-I${_old}" "-I${INCLUDE}")
  set(_first "")
elseif(CASE MATCHES "^aten_included_first")
  set(_includes "-I${DLPACK_DIR}" "-I${INCLUDE}")
  set(_first "#include <ATen/dlpack.h>\n")
else()
  message(FATAL_ERROR "old_header.cmake: unknown CASE ${CASE}")
endif()

if(CASE MATCHES "_c$")
  set(_file "${WORK}/user.c")
  file(WRITE "${_file}" "${_first}#include <dlbridge/dlbridge_c.h>\nint main(void) { return 0; }\n")
  set(_compile "${CC}" -std=c99)
else()
  set(_file "${WORK}/user.cpp")
  file(WRITE "${_file}" "${_first}#include <dlbridge/dlbridge.h>\nint main() { return 0; }\n")
  set(_compile "${CXX}" -std=c++17)
endif()
if(EXPECT STREQUAL "accept")  # a 1.x ATen/dlpack.h (libtorch 2.x): no refusal, no error
  run(${_compile} ${_includes} -c "${_file}" -o "${WORK}/user.o")
  return()
endif()
run_expect_failure(${_compile} ${_includes} -c "${_file}" -o "${WORK}/user.o")
set(_out "${RUN_OUTPUT}")
expect_in("${_out}" "dlbridge needs a DLPack >= 1.0 header" "the refusal")
expect_in("${_out}" "DLPack 0\\.6 \\(DLPACK_VERSION 60" "the version found")
expect_in("${_out}" "Include dlbridge's headers before any other DLPack header" "what to do")
# Exactly one #error, and no error from anywhere but dlpack_header.h.
string(REPLACE ";" "," _lines_text "${_out}")  # a ';' would split the CMake list
string(REGEX MATCHALL "[^\n]*error[^\n]*" _error_lines "${_lines_text}")
set(_refusals 0)
foreach(_line IN LISTS _error_lines)
  if(_line MATCHES "^#" OR _line MATCHES "^ *[0-9]+ \\|" OR _line MATCHES "^[0-9]+ errors? generated")
    continue()  # the compiler echoing a source line (clang: as is, g++: numbered), or a count
  endif()
  if(NOT _line MATCHES "dlpack_header\\.h:[0-9]+:[0-9]+: (fatal )?error:")
    message(FATAL_ERROR "an error from outside dlpack_header.h: ${_line}")
  endif()
  if(_line MATCHES "needs a DLPack >= 1.0 header")
    math(EXPR _refusals "${_refusals} + 1")
  endif()
endforeach()
if(NOT _refusals EQUAL 1)
  message(FATAL_ERROR "expected exactly one #error, found ${_refusals}")
endif()
