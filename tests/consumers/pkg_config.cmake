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

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REPLACE ";" " " _cmd "${ARGN}")
  message("$ ${_cmd}\n${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "pkg_config.cmake: failed (${_rc})")
  endif()
  set(OUTPUT "${_out}" PARENT_SCOPE)
endfunction()

# A static library needs its Libs.private (the C++ runtime): that is what --static is for.
set(_static "")
if(STATIC)
  set(_static --static)
endif()
run("${PKG_CONFIG}" ${_static} --cflags --libs dlbridge)
separate_arguments(_flags UNIX_COMMAND "${OUTPUT}")
run("${PKG_CONFIG}" --variable=libdir dlbridge)
set(_libdir "${OUTPUT}")

run("${CC}" -std=c99 -Wall -Wextra -Werror "${SOURCE}" ${_flags} -pthread
    "-Wl,-rpath,${_libdir}" -o "${OUT}")
run("${OUT}")
if(NOT OUTPUT MATCHES "[0-9]+ passed, 0 failed")
  message(FATAL_ERROR "pkg_config.cmake: unexpected output")
endif()
