# PKG-3 (CASE=old_header): configuring with a DLPack 0.x header fails, naming the header and
# its version and saying how to get a 1.x one.
# PKG-4 (CASE=no_header): configuring where no DLPack header can be found (a copy of the build
# files without .deps/, system paths not searched) fails, saying how to get one.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
fresh_dir("${WORK}")
set(_src "${WORK}/src")
file(MAKE_DIRECTORY "${_src}")
foreach(_entry CMakeLists.txt LICENSE cmake include src)
  file(COPY "${SOURCE_DIR}/${_entry}" DESTINATION "${_src}")
endforeach()
set(_gen -G "${GENERATOR}")
if(MAKE_PROGRAM)
  list(APPEND _gen "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
set(_options ${_gen} "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_COMPILER=${CXX}"
    -DDLBRIDGE_BUILD_TESTS=OFF -DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_PYTHON=OFF)

if(CASE STREQUAL "old_header")
  file(WRITE "${WORK}/old/dlpack/dlpack.h"
       "#ifndef DLPACK_DLPACK_H_\n#define DLPACK_DLPACK_H_\n#define DLPACK_VERSION 60\n#endif\n")
  run_expect_failure("${CMAKE_COMMAND}" -S "${_src}" -B "${WORK}/build" ${_options}
                     "-DDLBRIDGE_DLPACK_INCLUDE_DIR=${WORK}/old")
  expect_in("${RUN_OUTPUT}" "dlbridge needs a DLPack >= 1.0 header" "the refusal")
  expect_in("${RUN_OUTPUT}" "DLPack 0\\.6" "the version found")
  string(FIND "${RUN_OUTPUT}" "${WORK}/old/dlpack/dlpack.h" _at)  # a path, not a regex
  if(_at EQUAL -1)
    message(FATAL_ERROR "expected the header's path ${WORK}/old/dlpack/dlpack.h in the output")
  endif()
elseif(CASE STREQUAL "no_header")
  run_expect_failure("${CMAKE_COMMAND}" -S "${_src}" -B "${WORK}/build" ${_options}
                     -DCMAKE_FIND_USE_CMAKE_SYSTEM_PATH=OFF
                     -DCMAKE_FIND_USE_SYSTEM_ENVIRONMENT_PATH=OFF
                     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  expect_in("${RUN_OUTPUT}" "no DLPack header \\(dlpack/dlpack.h\\) was found" "the finding")
else()
  message(FATAL_ERROR "configure_refusal.cmake: unknown CASE ${CASE}")
endif()
expect_in("${RUN_OUTPUT}" "run scripts/setup[^;]*;[ \n]+or[ \n]+configure" "how to get a header")
expect_in("${RUN_OUTPUT}" "DLBRIDGE_DLPACK_INCLUDE_DIR" "the variable to set")
