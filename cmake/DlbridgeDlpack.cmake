# Finds a DLPack >= 1.0 header, provides dlpack::dlpack for the build, and decides how an
# installed dlbridge finds it again (spec/package.md: PKG-3 and PKG-4 are enforced here; the
# install interface below serves the install rules, see PKG-1).
#
# Where the header comes from, first match wins:
#   1. DLBRIDGE_DLPACK_INCLUDE_DIR (a directory holding dlpack/dlpack.h);
#   2. an existing dlpack::dlpack target, or find_package(dlpack CONFIG), which also searches
#      .deps/ (where scripts/setup puts Debian's 1.3 package);
#   3. dlpack/dlpack.h on the compiler's search path (find_path).
# The version is read from the header itself: Debian's dlpack package reports 0.6 even when
# its header is 1.3.
#
# DLBRIDGE_INSTALL_DLPACK (an option at the top of CMakeLists.txt, default ON) installs that header with dlbridge, under
# include/dlbridge/dlpack-1/, and exports it in dlbridge::dlbridge's include directories, so an
# install is self-contained and relocatable. OFF is for distributions that package a DLPack
# >= 1.0 of their own: the installed config then finds it as a dependency.
include(GNUInstallDirs)
set(DLBRIDGE_DLPACK_INCLUDE_DIR "" CACHE PATH
    "Directory holding dlpack/dlpack.h (>= 1.0); empty = find_package(dlpack), then the system")
set(DLBRIDGE_DLPACK_INSTALL_SUBDIR "dlbridge/dlpack-1")

# One string (string(CONCAT), not set(): its "; " would split a list).
string(CONCAT _dlb_dlpack_how_to_get
    "Get a DLPack >= 1.0 header in one of these ways: run scripts/setup (it extracts Debian's "
    "1.3 header into .deps/); or configure with -DDLBRIDGE_DLPACK_INCLUDE_DIR=<dir holding "
    "dlpack/dlpack.h>; or install a DLPack >= 1.0 package and point CMAKE_PREFIX_PATH at it. "
    "Debian 12's libdlpack-dev is 0.6 and does not work.")

set(_dlb_dlpack_include "")
set(_dlb_dlpack_source "")
if(DLBRIDGE_DLPACK_INCLUDE_DIR)
  set(_dlb_dlpack_include "${DLBRIDGE_DLPACK_INCLUDE_DIR}")
  set(_dlb_dlpack_source "DLBRIDGE_DLPACK_INCLUDE_DIR")
  if(NOT EXISTS "${_dlb_dlpack_include}/dlpack/dlpack.h")
    string(CONCAT _msg "dlbridge: DLBRIDGE_DLPACK_INCLUDE_DIR='${_dlb_dlpack_include}' holds no "
                       "dlpack/dlpack.h. " "${_dlb_dlpack_how_to_get}")
    message(FATAL_ERROR "${_msg}")
  endif()
else()
  if(NOT TARGET dlpack::dlpack)
    find_package(dlpack CONFIG QUIET
      HINTS "${CMAKE_CURRENT_SOURCE_DIR}/.deps/dlpack/usr" "${PROJECT_SOURCE_DIR}/.deps/dlpack/usr")
  endif()
  if(TARGET dlpack::dlpack)
    get_target_property(_dlb_dlpack_include dlpack::dlpack INTERFACE_INCLUDE_DIRECTORIES)
    set(_dlb_dlpack_source "the dlpack::dlpack target")
  else()
    find_path(DLBRIDGE_DLPACK_SYSTEM_INCLUDE_DIR dlpack/dlpack.h
              DOC "A dlpack/dlpack.h found on the system search path")
    mark_as_advanced(DLBRIDGE_DLPACK_SYSTEM_INCLUDE_DIR)
    if(DLBRIDGE_DLPACK_SYSTEM_INCLUDE_DIR)
      set(_dlb_dlpack_include "${DLBRIDGE_DLPACK_SYSTEM_INCLUDE_DIR}")
      set(_dlb_dlpack_source "the system include path")
    endif()
  endif()
endif()

set(_dlb_dlpack_header "")
foreach(_dir IN LISTS _dlb_dlpack_include)
  if(EXISTS "${_dir}/dlpack/dlpack.h")
    set(_dlb_dlpack_header "${_dir}/dlpack/dlpack.h")
    set(DLBRIDGE_DLPACK_HEADER_DIR "${_dir}")
    break()
  endif()
endforeach()
if(NOT _dlb_dlpack_header)  # PKG-4: no header anywhere stops configure, saying how to get one
  string(CONCAT _msg "dlbridge: no DLPack header (dlpack/dlpack.h) was found. "
                     "${_dlb_dlpack_how_to_get}")
  message(FATAL_ERROR "${_msg}")
endif()

# A 1.x header defines DLPACK_MAJOR_VERSION/DLPACK_MINOR_VERSION; a 0.x one only
# DLPACK_VERSION (60 for 0.6). include/dlbridge/dlpack_header.h makes the same check at
# compile time, for headers that reach a consumer's build some other way.
file(STRINGS "${_dlb_dlpack_header}" _dlb_dlpack_lines
     REGEX "#define DLPACK_(MAJOR_|MINOR_)?VERSION ")
set(DLBRIDGE_DLPACK_MAJOR "")
set(DLBRIDGE_DLPACK_MINOR "")
set(_dlb_dlpack_legacy "")
foreach(_line IN LISTS _dlb_dlpack_lines)
  if(_line MATCHES "DLPACK_MAJOR_VERSION ([0-9]+)")
    set(DLBRIDGE_DLPACK_MAJOR "${CMAKE_MATCH_1}")
  elseif(_line MATCHES "DLPACK_MINOR_VERSION ([0-9]+)")
    set(DLBRIDGE_DLPACK_MINOR "${CMAKE_MATCH_1}")
  elseif(_line MATCHES "DLPACK_VERSION ([0-9]+)")
    set(_dlb_dlpack_legacy "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(NOT DLBRIDGE_DLPACK_MAJOR STREQUAL "1")  # PKG-3: the version is the header's macros'
  if(_dlb_dlpack_legacy)
    math(EXPR _dlb_legacy_minor "${_dlb_dlpack_legacy} / 10")
    set(_dlb_found "DLPack 0.${_dlb_legacy_minor} (DLPACK_VERSION ${_dlb_dlpack_legacy})")
  elseif(DLBRIDGE_DLPACK_MAJOR)
    set(_dlb_found "DLPack ${DLBRIDGE_DLPACK_MAJOR}.${DLBRIDGE_DLPACK_MINOR}")
  else()
    set(_dlb_found "a header with no DLPack version macros")
  endif()
  string(CONCAT _msg "dlbridge needs a DLPack >= 1.0 header, but ${_dlb_dlpack_header} (from "
                     "${_dlb_dlpack_source}) is ${_dlb_found}; 0.x headers have no versioned "
                     "tensors. " "${_dlb_dlpack_how_to_get}")
  message(FATAL_ERROR "${_msg}")
endif()
message(STATUS "dlbridge: DLPack header ${DLBRIDGE_DLPACK_MAJOR}.${DLBRIDGE_DLPACK_MINOR} at "
               "${_dlb_dlpack_header} (from ${_dlb_dlpack_source})")

# Inside this build (and for add_subdirectory/FetchContent users) the header is used where it
# is; a target of our own avoids touching a dlpack::dlpack that a parent project owns.
add_library(dlbridge_dlpack INTERFACE)
if(TARGET dlpack::dlpack AND NOT DLBRIDGE_DLPACK_INCLUDE_DIR)
  target_link_libraries(dlbridge_dlpack INTERFACE $<BUILD_INTERFACE:dlpack::dlpack>)
else()
  target_include_directories(dlbridge_dlpack INTERFACE
                             $<BUILD_INTERFACE:${DLBRIDGE_DLPACK_HEADER_DIR}>)
endif()
if(NOT TARGET dlpack::dlpack)
  add_library(dlpack::dlpack ALIAS dlbridge_dlpack)
endif()
if(DLBRIDGE_INSTALL_DLPACK)
  target_include_directories(dlbridge_dlpack INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/${DLBRIDGE_DLPACK_INSTALL_SUBDIR}>)
else()
  # The installed config creates dlpack::dlpack from the distribution's package.
  target_link_libraries(dlbridge_dlpack INTERFACE $<INSTALL_INTERFACE:dlpack::dlpack>)
endif()
