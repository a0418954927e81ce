# Consumer: the C test (tests/c/test_c_api.c) compiled and linked with nothing but
# `pkg-config --cflags --libs dlbridge` against an install, then run.
# cmake -DPKG_CONFIG=<pkg-config> -DCC=<C compiler> -DPREFIX=<install> -DSTATIC=ON|OFF
#       -DSOURCE=<test_c_api.c> -DOUT=<executable> -P pkg_config.cmake
foreach(_var PKG_CONFIG CC PREFIX SOURCE OUT)
  if(NOT ${_var})
    message(FATAL_ERROR "pkg_config.cmake: -D${_var}= is required")
  endif()
endforeach()
file(GLOB_RECURSE _pc "${PREFIX}/dlbridge.pc")
if(NOT _pc)
  message(FATAL_ERROR "pkg_config.cmake: no dlbridge.pc under ${PREFIX}")
endif()
list(GET _pc 0 _pc)
get_filename_component(_pc_dir "${_pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")

include("${CMAKE_CURRENT_LIST_DIR}/../package/common.cmake")  # run(), RUN_OUTPUT

# A static library needs its Libs.private (the C++ runtime): that is what --static is for.
set(_static "")
if(STATIC)
  set(_static --static)
endif()
run("${PKG_CONFIG}" ${_static} --cflags --libs dlbridge)
string(STRIP "${RUN_OUTPUT}" _flags_text)
separate_arguments(_flags UNIX_COMMAND "${_flags_text}")
run("${PKG_CONFIG}" --variable=libdir dlbridge)
string(STRIP "${RUN_OUTPUT}" _libdir)

# tests/platform.h, which the C API test includes, is next to the tests' sources.
get_filename_component(_tests_dir "${SOURCE}" DIRECTORY)
get_filename_component(_tests_dir "${_tests_dir}" DIRECTORY)
rpath_flag(_rpath "${_libdir}")
run("${CC}" -std=c99 -Wall -Wextra -Werror "${SOURCE}" "-I${_tests_dir}" ${_flags} -pthread
    ${_rpath} -o "${OUT}")
run_program("${OUT}" "${PREFIX}")
if(NOT RUN_OUTPUT MATCHES "[0-9]+ passed, 0 failed")
  message(FATAL_ERROR "pkg_config.cmake: unexpected output")
endif()
