# PKG-9: every option() and cmake_dependent_option() of the build is declared in the top-level
# CMakeLists.txt; no other CMake file of the source tree declares one.
# Run: cmake -DSOURCE_DIR=<tree> -P options_in_one_place.cmake
cmake_policy(SET CMP0009 NEW)  # do not follow links (.deps/ may be one)
file(GLOB_RECURSE _files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/CMakeLists.txt"
     "${SOURCE_DIR}/*.cmake")
set(_bad "")
set(_top 0)
foreach(_file IN LISTS _files)
  if(_file MATCHES "^(build|\\.deps|\\.git|out)/")
    continue()
  endif()
  # A build folder of any name inside the tree (docs/building.md's plain recipe uses b/) holds copies of
  # the tree (the package tests configure some): a folder with a CMakeCache.txt is a build.
  string(REGEX MATCH "^[^/]+/" _first "${_file}")
  if(_first AND EXISTS "${SOURCE_DIR}/${_first}CMakeCache.txt")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${_file}" _lines REGEX "^[ \t]*(cmake_dependent_)?option[ \t]*\\(")
  list(LENGTH _lines _n)
  if(_file STREQUAL "CMakeLists.txt")
    set(_top ${_n})
  elseif(_n GREATER 0)
    string(APPEND _bad "\n  ${_file}: ${_lines}")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "options declared outside the top-level CMakeLists.txt (move them to its "
                      "options block; the other files only read them):${_bad}")
endif()
if(_top EQUAL 0)
  message(FATAL_ERROR "the top-level CMakeLists.txt declares no option: is SOURCE_DIR right?")
endif()
message("${_top} options, all in the top-level CMakeLists.txt")
