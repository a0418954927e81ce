# The API reference (target `docs`): Doxygen over the public headers (include/dlbridge/*.h),
# docs/mainpage.md and docs/dlpack_header.dox, with the guides (docs/*.md, docs/bridges/*.md,
# listed in docs/Doxyfile.in's INPUT) as pages and their pictures (docs/images); HTML in
# <build>/docs/api/html.
# Not in `all`.
# Its options (at the top of CMakeLists.txt):
#   DLBRIDGE_BUILD_DOCS   ON by default when dlbridge is the top-level project and doxygen is
#                         found; ON without doxygen is a configure error.
#   DLBRIDGE_DOCS_WERROR  Doxygen warnings (undocumented public API included) fail the build
#                         (PKG-6: every public entity of include/dlbridge/ is documented).
# scripts/docs builds it the way CI does (warnings as errors).

# Script mode: the checks Doxygen 1.9.4 does not make, run by the target around doxygen.
#   cmake -DDLB_DOCS_STEP=headers|enumerators -DDLB_DOCS_DIR=<dir> -DDLB_DOCS_WERROR=ON|OFF
#         -P DlbridgeDocs.cmake
# headers (before doxygen; DLB_DOCS_DIR = the source tree): doxygen reports undocumented
#   macros and functions of a header only when the header itself is documented, so every
#   public header needs a `@file` comment, in the header or in a docs/*.dox page; and every
#   guide (docs/*.md, docs/bridges/*.md) must be in Doxyfile.in's INPUT.
# enumerators (after doxygen; DLB_DOCS_DIR = its XML output): doxygen before 1.9.7
#   (WARN_IF_UNDOC_ENUM_VAL) does not report undocumented enumerators.
if(CMAKE_SCRIPT_MODE_FILE)
  cmake_policy(VERSION 3.16)
  set(_dlb_problems "")
  if(DLB_DOCS_STEP STREQUAL "headers")
    file(GLOB _dlb_headers "${DLB_DOCS_DIR}/include/dlbridge/*.h")
    file(GLOB _dlb_pages "${DLB_DOCS_DIR}/docs/*.dox")
    set(_dlb_page_text "")
    foreach(_page IN LISTS _dlb_pages)
      file(READ "${_page}" _text)
      string(APPEND _dlb_page_text "${_text}")
    endforeach()
    foreach(_header IN LISTS _dlb_headers)
      get_filename_component(_name "${_header}" NAME)
      file(READ "${_header}" _text)
      if(NOT _text MATCHES "(///|/\\*\\*|//!|/\\*!)[ \t]*[@\\]file" AND
         NOT _dlb_page_text MATCHES "[@\\]file[ \t]+(dlbridge/)?${_name}")
        string(APPEND _dlb_problems "\n  include/dlbridge/${_name}: no `/// @file` comment "
               "(doxygen checks the macros and functions of documented files only)")
      endif()
    endforeach()
    # Every guide is a page of the site: Doxyfile.in names each one (its INPUT is a list, so
    # a new guide left out of it would be missing from the site without a word).
    file(READ "${DLB_DOCS_DIR}/docs/Doxyfile.in" _doxyfile)
    file(GLOB _dlb_guides RELATIVE "${DLB_DOCS_DIR}" "${DLB_DOCS_DIR}/docs/*.md"
         "${DLB_DOCS_DIR}/docs/bridges/*.md")
    foreach(_guide IN LISTS _dlb_guides)
      string(FIND "${_doxyfile}" "\"@PROJECT_SOURCE_DIR@/${_guide}\"" _at)
      if(_at EQUAL -1)
        string(APPEND _dlb_problems "\n  ${_guide}: not in docs/Doxyfile.in's INPUT, so not a "
               "page of the site: add it there")
      endif()
    endforeach()
  elseif(DLB_DOCS_STEP STREQUAL "enumerators")
    file(GLOB _dlb_xml "${DLB_DOCS_DIR}/*.xml")
    set(_dlb_seen "")
    foreach(_xml IN LISTS _dlb_xml)
      file(READ "${_xml}" _text)
      if(NOT _text MATCHES "<enumvalue ")
        continue()
      endif()
      # Characters that would split or nest CMake lists.
      string(REPLACE ";" "<dlb-semicolon>" _text "${_text}")
      string(REPLACE "[" "<dlb-open>" _text "${_text}")
      string(REPLACE "]" "<dlb-close>" _text "${_text}")
      string(REPLACE "<memberdef " ";<memberdef " _members "${_text}")
      foreach(_member IN LISTS _members)
        if(NOT _member MATCHES "^<memberdef kind=\"enum\" id=\"([^\"]*)\"")
          continue()
        endif()
        set(_id "${CMAKE_MATCH_1}")
        if(_id IN_LIST _dlb_seen)
          continue()
        endif()
        list(APPEND _dlb_seen "${_id}")
        string(REGEX MATCH "<qualifiedname>([^<]*)</qualifiedname>" _ "${_member}")
        set(_enum "${CMAKE_MATCH_1}")
        string(REGEX MATCH "<location file=\"([^\"]*)\" line=\"([0-9]*)\"" _ "${_member}")
        set(_where "include/${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
        string(REPLACE "<enumvalue " ";<enumvalue " _values "${_member}")
        list(REMOVE_AT _values 0)
        foreach(_value IN LISTS _values)
          string(FIND "${_value}" "</enumvalue>" _end)
          string(SUBSTRING "${_value}" 0 ${_end} _value)
          if(_value MATCHES "prot=\"public\"" AND NOT _value MATCHES "<para>")
            string(REGEX MATCH "<name>([^<]*)</name>" _ "${_value}")
            string(APPEND _dlb_problems
                   "\n  ${_where}: enumerator ${CMAKE_MATCH_1} of ${_enum} is not documented")
          endif()
        endforeach()
      endforeach()
    endforeach()
  else()
    message(FATAL_ERROR "DlbridgeDocs.cmake: DLB_DOCS_STEP is '${DLB_DOCS_STEP}'; "
                        "accepted: headers, enumerators")
  endif()
  if(_dlb_problems)
    if(DLB_DOCS_WERROR)
      message(FATAL_ERROR "dlbridge docs:${_dlb_problems}")
    endif()
    message(WARNING "dlbridge docs:${_dlb_problems}")
  endif()
  return()
endif()

# The options are at the top of CMakeLists.txt; cmake/DlbridgeDetect.cmake looked for doxygen.
if(NOT DLBRIDGE_BUILD_DOCS)
  return()
endif()
if(NOT DOXYGEN_FOUND)
  message(FATAL_ERROR "dlbridge: DLBRIDGE_BUILD_DOCS is ON but doxygen was not found. Install "
                      "it (scripts/setup, or apt-get install doxygen), point DOXYGEN_EXECUTABLE "
                      "at it, or configure with -DDLBRIDGE_BUILD_DOCS=OFF.")
endif()

# FAIL_ON_WARNINGS (doxygen >= 1.9.0) prints every warning and then fails; YES stops at the
# first one.
if(NOT DLBRIDGE_DOCS_WERROR)
  set(DLBRIDGE_DOXYGEN_WARN_AS_ERROR NO)
elseif(DOXYGEN_VERSION VERSION_LESS 1.9.0)
  set(DLBRIDGE_DOXYGEN_WARN_AS_ERROR YES)
else()
  set(DLBRIDGE_DOXYGEN_WARN_AS_ERROR FAIL_ON_WARNINGS)
endif()
# WARN_IF_INCOMPLETE_DOC (a function documenting some parameters but not all) is 1.9.4's;
# an older doxygen would warn about the unknown tag.
set(DLBRIDGE_DOXYGEN_VERSION_TAGS "")
if(NOT DOXYGEN_VERSION VERSION_LESS 1.9.4)
  set(DLBRIDGE_DOXYGEN_VERSION_TAGS "WARN_IF_INCOMPLETE_DOC = YES")
endif()

set(DLBRIDGE_DOCS_OUTPUT_DIR "${PROJECT_BINARY_DIR}/docs/api")
file(GLOB _dlb_docs_headers "${PROJECT_SOURCE_DIR}/include/dlbridge/*.h")
file(GLOB _dlb_docs_guides CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/docs/*.md"
     "${PROJECT_SOURCE_DIR}/docs/bridges/*.md")
configure_file("${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" "${PROJECT_BINARY_DIR}/docs/Doxyfile" @ONLY)

# Always runs when asked for (a second or two): the check CI relies on never goes stale.
add_custom_target(dlbridge_docs
  COMMAND "${CMAKE_COMMAND}" -DDLB_DOCS_STEP=headers "-DDLB_DOCS_DIR=${PROJECT_SOURCE_DIR}"
          "-DDLB_DOCS_WERROR=${DLBRIDGE_DOCS_WERROR}" -P "${CMAKE_CURRENT_LIST_FILE}"
  COMMAND "${CMAKE_COMMAND}" -E rm -rf "${DLBRIDGE_DOCS_OUTPUT_DIR}/xml"
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${DLBRIDGE_DOCS_OUTPUT_DIR}"
  COMMAND Doxygen::doxygen "${PROJECT_BINARY_DIR}/docs/Doxyfile"
  COMMAND "${CMAKE_COMMAND}" -DDLB_DOCS_STEP=enumerators
          "-DDLB_DOCS_DIR=${DLBRIDGE_DOCS_OUTPUT_DIR}/xml"
          "-DDLB_DOCS_WERROR=${DLBRIDGE_DOCS_WERROR}" -P "${CMAKE_CURRENT_LIST_FILE}"
  COMMAND "${CMAKE_COMMAND}" -E echo
          "dlbridge: API reference in ${DLBRIDGE_DOCS_OUTPUT_DIR}/html/index.html"
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}/docs"
  BYPRODUCTS "${DLBRIDGE_DOCS_OUTPUT_DIR}/html/index.html"
  SOURCES "${PROJECT_SOURCE_DIR}/docs/Doxyfile.in" ${_dlb_docs_guides}
          "${PROJECT_SOURCE_DIR}/docs/dlpack_header.dox" ${_dlb_docs_headers}
  COMMENT "Doxygen: dlbridge's API reference"
  VERBATIM)
# `docs` as well, unless dlbridge is a subproject (the parent may have its own `docs`).
if(DLBRIDGE_IS_TOP_LEVEL)
  add_custom_target(docs DEPENDS dlbridge_docs)
endif()

# `cmake --install` copies the HTML when it has been built (component docs).
if(DLBRIDGE_INSTALL)
  include(GNUInstallDirs)
  install(DIRECTORY "${DLBRIDGE_DOCS_OUTPUT_DIR}/html/"
          DESTINATION "${CMAKE_INSTALL_DOCDIR}/api"
          COMPONENT docs
          OPTIONAL)
endif()
