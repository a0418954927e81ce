# PKG-1: `cmake --install` into a prefix, move the prefix, then build and run against the moved
# copy: a find_package consumer (C++ and C), a pkg-config C consumer and a pkg-config C++
# consumer. Their sources are copied out first, and their compile commands are checked to name
# neither the source tree nor the DLPack header dlbridge was built from.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
foreach(_var BUILD_DIR WORK SOURCE_DIR DLPACK_DIR GENERATOR CC CXX)
  if(NOT ${_var})
    message(FATAL_ERROR "relocate.cmake: -D${_var}= is required")
  endif()
endforeach()
fresh_dir("${WORK}")
set(_staged "${WORK}/staged-prefix")
set(_moved "${WORK}/moved/elsewhere/prefix")

set(_config "")
if(CONFIG)
  set(_config --config "${CONFIG}")
endif()
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" ${_config} --prefix "${_staged}")
get_filename_component(_parent "${_moved}" DIRECTORY)
file(MAKE_DIRECTORY "${_parent}")
file(RENAME "${_staged}" "${_moved}")
if(EXISTS "${_staged}")
  message(FATAL_ERROR "the staged prefix still exists after the move")
endif()

# The installed package files name no absolute path: not the staging prefix, the source
# tree, the build tree or the DLPack header's directory.
file(GLOB_RECURSE _package_files "${_moved}/*.cmake" "${_moved}/*.pc")
if(NOT _package_files)
  message(FATAL_ERROR "no CMake or pkg-config files installed under ${_moved}")
endif()
foreach(_file IN LISTS _package_files)
  file(READ "${_file}" _text)
  expect_none_of("${_text}" "${_file} names an absolute path"
                 "${_staged}" "${SOURCE_DIR}" "${BUILD_DIR}" "${DLPACK_DIR}")
endforeach()
foreach(_file include/dlbridge/dlbridge.h include/dlbridge/dlpack-1/dlpack/dlpack.h
              lib/cmake/dlbridge/dlbridgeConfig.cmake lib/pkgconfig/dlbridge.pc
              share/doc/dlbridge/LICENSE)
  if(NOT EXISTS "${_moved}/${_file}")
    message(FATAL_ERROR "the install lacks ${_file}")
  endif()
endforeach()

# Consumer sources, copied out so nothing of the source tree is near the build.
set(_src "${WORK}/consumer-src")
file(COPY "${SOURCE_DIR}/tests/consumers/consumer.cpp" "${SOURCE_DIR}/tests/consumers/consumer_c.c"
          "${SOURCE_DIR}/tests/consumers/find-package" "${SOURCE_DIR}/tests/c/test_c_api.c"
          "${SOURCE_DIR}/tests/consumers/windows_dlls.cmake"
     DESTINATION "${_src}")
file(COPY "${SOURCE_DIR}/tests/platform.h" DESTINATION "${WORK}")  # test_c_api.c's "../"

function(check_no_foreign_paths text what)
  expect_none_of("${text}" "${what} uses a path outside the moved prefix"
                 "${SOURCE_DIR}/include" "${SOURCE_DIR}/.deps" "${DLPACK_DIR}" "${_staged}")
endfunction()

# 1. find_package (C++ and C programs).
set(_gen -G "${GENERATOR}")
if(MAKE_PROGRAM)
  list(APPEND _gen "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
set(_fp "${WORK}/find-package-build")
run("${CMAKE_COMMAND}" -S "${_src}/find-package" -B "${_fp}" ${_gen} ${DLB_TOOLCHAIN_ARGS} "-DCMAKE_C_COMPILER=${CC}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${_moved}" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
file(READ "${_fp}/compile_commands.json" _commands)
check_no_foreign_paths("${_commands}" "the find_package consumer's compile commands")
string(FIND "${_commands}" "${_moved}/include/dlbridge/dlpack-1" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "the find_package consumer does not use the moved prefix's DLPack header")
endif()
run("${CMAKE_COMMAND}" --build "${_fp}")
run("${CMAKE_CTEST_COMMAND}" --test-dir "${_fp}" --output-on-failure)
expect_in("${RUN_OUTPUT}" "100% tests passed" "both find_package consumers passing")

# 2. pkg-config, a C program (the C API test) and a C++ program.
if(PKG_CONFIG)
  set(ENV{PKG_CONFIG_PATH} "${_moved}/lib/pkgconfig")
  set(_static "")
  if(STATIC)
    set(_static --static)
  endif()
  run("${PKG_CONFIG}" ${_static} --cflags --libs dlbridge)
  string(STRIP "${RUN_OUTPUT}" _flags_text)
  check_no_foreign_paths("${_flags_text}" "pkg-config's flags")
  string(FIND "${_flags_text}" "-I${_moved}/" _at)
  if(_at EQUAL -1 OR NOT _flags_text MATCHES "/include/dlbridge/dlpack-1( |$)")
    message(FATAL_ERROR "pkg-config's flags lack the moved prefix's include/dlbridge/dlpack-1")
  endif()
  separate_arguments(_flags UNIX_COMMAND "${_flags_text}")
  run("${PKG_CONFIG}" --variable=libdir dlbridge)
  string(STRIP "${RUN_OUTPUT}" _libdir)
  # The C API test, built and run the way C-24 builds it (tests/consumers/pkg_config.cmake).
  run("${CMAKE_COMMAND}" "-DPKG_CONFIG=${PKG_CONFIG}" "-DCC=${CC}" "-DPREFIX=${_moved}"
      "-DSTATIC=${STATIC}" "-DSOURCE=${_src}/test_c_api.c" "-DOUT=${WORK}/pc_c_consumer"
      "-DEMULATOR=${EMULATOR}" "-DWINDOWS=${WINDOWS}"
      -P "${SOURCE_DIR}/tests/consumers/pkg_config.cmake")
  rpath_flag(_rpath "${_libdir}")
  run("${CXX}" -std=c++17 -Wall -Wextra -Werror "${_src}/consumer.cpp" ${_flags} -pthread
      ${_rpath} -o "${WORK}/pc_cxx_consumer")
  run_program("${WORK}/pc_cxx_consumer" "${_moved}")
else()
  message(FATAL_ERROR "pkg-config not found: install pkg-config (scripts/setup does)")
endif()
message("PKG-1: the moved prefix ${_moved} served every consumer")
