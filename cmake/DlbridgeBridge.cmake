# dlbridge_add_bridge(): how every framework bridge in bridges/ is declared, in one place
# (spec/bridges.md, "Writing a bridge"). A bridge's CMakeLists.txt is one call, plus whatever
# only that bridge needs:
#
#   dlbridge_add_bridge(<name>
#     MISSING <text>           what to install when the framework is not found (status line)
#     [HEADERS <file>...]      public headers under include/dlbridge/ (default <name>.h)
#     [SOURCES <file>...]      a compiled library (shared or static as the project builds);
#                              without them the bridge is header-only (an INTERFACE target)
#     [LINK <item>...]         what the target links (PUBLIC or INTERFACE); generator
#                              expressions such as $<BUILD_INTERFACE:...> pass through
#     [CXX_STD <n>]            the C++ standard its headers need (default 17)
#     [TESTS <file>...]        doctest sources: test_<name>_bridge, ctest names bridge.<name>.*
#     [TEST_MAIN <file>]       the tests' main (default tests/test_main.cpp of the project)
#     [TEST_PROPERTIES <p> <v>...]  ctest properties of every test case (ENVIRONMENT ...)
#     [EXAMPLE <file>]         examples/<file>, built as <file's stem> when examples are
#     [PYTHON_DIR <dir>]       the bridge's Python side, added by python/CMakeLists.txt
#   )
#
# The find: dlbridge-<name>-find.cmake (in the bridge's folder, installed for
# dlbridgeConfig.cmake) defines the macro dlbridge_find_<name>(), which sets
# DLBRIDGE_<NAME>_FOUND and DLBRIDGE_<NAME>_FOUND_AS (what was found, for the status line).
# Without the framework the bridge is off with a status line, never an error, and
# DLBRIDGE_<NAME>_FOUND is OFF in the caller, which then returns. Everything the find sets is
# handed to the caller's scope, so a bridge's own extra steps can read it.
#
# The target is dlbridge_<name> (alias dlbridge::<name>, exported as dlbridge::<name>); it is
# installed with its headers into dlbridge_<name>Targets, and its name is added to the list of
# installed bridges that dlbridgeConfig.cmake includes (dlbridge-bridges.cmake). The tests
# folder's own CMakeLists.txt, where there is one, adds what only that bridge tests
# (compile-fail cases, a helper library), after test_<name>_bridge exists.
# KIT-5: one declaration per bridge: finder, target, tests, example, install, and the list.
function(dlbridge_add_bridge name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MISSING;CXX_STD;TEST_MAIN;EXAMPLE;PYTHON_DIR"
                        "HEADERS;SOURCES;LINK;TESTS;TEST_PROPERTIES")
  string(TOUPPER "${name}" _dlb_upper)
  set(_dlb_dir "${CMAKE_CURRENT_SOURCE_DIR}")
  if(ARG_PYTHON_DIR)  # registered before the find: the Python side ships without the framework
    set_property(GLOBAL APPEND PROPERTY DLBRIDGE_BRIDGE_PYTHON_DIRS "${_dlb_dir}/${ARG_PYTHON_DIR}")
  endif()

  # The find, in this function's scope; what it sets goes to the caller's afterwards.
  get_cmake_property(_dlb_before VARIABLES)
  include("${_dlb_dir}/dlbridge-${name}-find.cmake")
  cmake_language(CALL dlbridge_find_${name})
  get_cmake_property(_dlb_after VARIABLES)
  list(REMOVE_ITEM _dlb_after ${_dlb_before} _dlb_before)
  foreach(_dlb_var IN LISTS _dlb_after)
    set(${_dlb_var} "${${_dlb_var}}" PARENT_SCOPE)
  endforeach()
  set(DLBRIDGE_${_dlb_upper}_FOUND "${DLBRIDGE_${_dlb_upper}_FOUND}" PARENT_SCOPE)
  if(NOT DLBRIDGE_${_dlb_upper}_FOUND)
    message(STATUS "dlbridge: ${name} bridge off: ${ARG_MISSING}")
    return()
  endif()
  message(STATUS "dlbridge: ${name} bridge on (${DLBRIDGE_${_dlb_upper}_FOUND_AS})")

  set(_dlb_target dlbridge_${name})
  if(NOT ARG_CXX_STD)
    set(ARG_CXX_STD 17)
  endif()
  if(NOT ARG_HEADERS)
    set(ARG_HEADERS include/dlbridge/${name}.h)
  endif()
  if(ARG_SOURCES)
    add_library(${_dlb_target} ${ARG_SOURCES})
    set(_dlb_scope PUBLIC)
    set_target_properties(${_dlb_target} PROPERTIES
      POSITION_INDEPENDENT_CODE ON
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR})
    dlbridge_project_target(${_dlb_target})
  else()
    add_library(${_dlb_target} INTERFACE)
    set(_dlb_scope INTERFACE)
  endif()
  add_library(dlbridge::${name} ALIAS ${_dlb_target})
  set_target_properties(${_dlb_target} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(${_dlb_target} ${_dlb_scope}
    $<BUILD_INTERFACE:${_dlb_dir}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${_dlb_target} ${_dlb_scope} dlbridge::dlbridge ${ARG_LINK})
  target_compile_features(${_dlb_target} ${_dlb_scope} cxx_std_${ARG_CXX_STD})

  if(DLBRIDGE_BUILD_TESTS AND ARG_TESTS)
    find_package(doctest REQUIRED)
    include(doctest)
    if(NOT ARG_TEST_MAIN)
      set(ARG_TEST_MAIN "${PROJECT_SOURCE_DIR}/tests/test_main.cpp")
    endif()
    add_executable(test_${name}_bridge ${ARG_TESTS} "${ARG_TEST_MAIN}")
    target_link_libraries(test_${name}_bridge PRIVATE dlbridge::${name} doctest::doctest)
    target_include_directories(test_${name}_bridge PRIVATE "${PROJECT_SOURCE_DIR}/tests")
    set_target_properties(test_${name}_bridge PROPERTIES CXX_SCAN_FOR_MODULES OFF)
    dlbridge_project_target(test_${name}_bridge)
    if(ARG_TEST_PROPERTIES)
      doctest_discover_tests(test_${name}_bridge TEST_PREFIX "bridge.${name}."
                             PROPERTIES ${ARG_TEST_PROPERTIES})
    else()
      doctest_discover_tests(test_${name}_bridge TEST_PREFIX "bridge.${name}.")
    endif()
  endif()
  if(DLBRIDGE_BUILD_TESTS AND EXISTS "${_dlb_dir}/tests/CMakeLists.txt")
    add_subdirectory("${_dlb_dir}/tests")
  endif()

  if(DLBRIDGE_BUILD_EXAMPLES AND ARG_EXAMPLE)
    get_filename_component(_dlb_example "${ARG_EXAMPLE}" NAME_WE)
    add_executable(${_dlb_example} "${PROJECT_SOURCE_DIR}/examples/${ARG_EXAMPLE}")
    target_link_libraries(${_dlb_example} PRIVATE dlbridge::${name})
    set_target_properties(${_dlb_example} PROPERTIES CXX_SCAN_FOR_MODULES OFF)
    dlbridge_project_target(${_dlb_example})
  endif()

  if(DLBRIDGE_INSTALL)
    include(GNUInstallDirs)
    install(TARGETS ${_dlb_target} EXPORT ${_dlb_target}Targets
      LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
      ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
      RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    install(FILES ${ARG_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlbridge)
    install(EXPORT ${_dlb_target}Targets NAMESPACE dlbridge:: DESTINATION ${DLBRIDGE_CMAKE_DIR})
    install(FILES "${_dlb_dir}/dlbridge-${name}-find.cmake" DESTINATION ${DLBRIDGE_CMAKE_DIR})
    set_property(GLOBAL APPEND PROPERTY DLBRIDGE_INSTALLED_BRIDGES ${name})
  endif()
endfunction()

# dlbridge_write_bridge_list(): dlbridge-bridges.cmake, the bridges this build installs, in the
# order they were declared: dlbridgeConfig.cmake runs each one's finder and includes its targets.
function(dlbridge_write_bridge_list)
  if(NOT DLBRIDGE_INSTALL)
    return()
  endif()
  get_property(installed GLOBAL PROPERTY DLBRIDGE_INSTALLED_BRIDGES)
  set(file "${PROJECT_BINARY_DIR}/dlbridge-bridges.cmake")
  file(WRITE "${file}" "# The framework bridges installed with this dlbridge (bridges/<name>).\n"
                       "set(dlbridge_BRIDGES ${installed})\n")
  install(FILES "${file}" DESTINATION ${DLBRIDGE_CMAKE_DIR})
endfunction()
