# PKG-8: configured as the top-level project with a single-config generator and no build type,
# dlbridge builds Release and says so; a type given is kept; as a subproject it sets nothing.
# Configure only (nothing is built), with everything optional turned off.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
fresh_dir("${WORK}")
unset(ENV{CMAKE_BUILD_TYPE})  # CMake >= 3.22 takes it as the default type
set(_options -G "${GENERATOR}" "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_CXX_COMPILER=${CXX}"
    "-DDLBRIDGE_DLPACK_INCLUDE_DIR=${DLPACK_DIR}" -DDLBRIDGE_BUILD_TESTS=OFF
    -DDLBRIDGE_BUILD_EXAMPLES=OFF -DDLBRIDGE_BUILD_PYTHON=OFF -DDLBRIDGE_BUILD_BRIDGES=OFF
    -DDLBRIDGE_BUILD_DOCS=OFF -DDLBRIDGE_INSTALL=OFF)
if(MAKE_PROGRAM)
  list(APPEND _options "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()

# cached_type(<build dir> <out var>): CMAKE_BUILD_TYPE as the cache holds it.
function(cached_type dir out)
  file(STRINGS "${dir}/CMakeCache.txt" _line REGEX "^CMAKE_BUILD_TYPE:")
  string(REGEX REPLACE "^CMAKE_BUILD_TYPE:[A-Z]+=" "" _type "${_line}")
  set(${out} "${_type}" PARENT_SCOPE)
endfunction()

# 1. Top level, no type: Release, with a status line saying so.
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK}/no-type" ${_options})
expect_in("${RUN_OUTPUT}" "dlbridge: no CMAKE_BUILD_TYPE given; building Release" "the status line")
cached_type("${WORK}/no-type" _type)
if(NOT _type STREQUAL "Release")
  message(FATAL_ERROR "a top-level configure without a type cached CMAKE_BUILD_TYPE='${_type}', "
                      "expected Release")
endif()

# 2. Top level, a type given: kept, and no status line.
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK}/given" ${_options} -DCMAKE_BUILD_TYPE=Debug)
cached_type("${WORK}/given" _type)
if(NOT _type STREQUAL "Debug" OR RUN_OUTPUT MATCHES "building Release")
  message(FATAL_ERROR "-DCMAKE_BUILD_TYPE=Debug became '${_type}' (or the default was announced)")
endif()

# 3. A subproject (add_subdirectory) of a project that sets no type: left empty.
file(WRITE "${WORK}/parent/CMakeLists.txt"
     "cmake_minimum_required(VERSION 3.25)\nproject(parent LANGUAGES C CXX)\n"
     "add_subdirectory(\"${SOURCE_DIR}\" dlbridge)\n")
run("${CMAKE_COMMAND}" -S "${WORK}/parent" -B "${WORK}/parent-build" ${_options})
cached_type("${WORK}/parent-build" _type)
if(NOT _type STREQUAL "" OR RUN_OUTPUT MATCHES "building Release")
  message(FATAL_ERROR "as a subproject, dlbridge set CMAKE_BUILD_TYPE='${_type}' (or announced "
                      "a default); the parent's choice (none) must be left alone")
endif()
