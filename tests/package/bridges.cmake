# KIT-5: every bridge this build installs is found again by find_package(dlbridge), through
# the installed list (dlbridge-bridges.cmake) and its own finder, and links: a consumer project
# against a fresh install defines dlbridge::<name> for each and builds a program linking them.
include("${CMAKE_CURRENT_LIST_DIR}/common.cmake")
foreach(_var BUILD_DIR WORK GENERATOR CXX)
  if(NOT ${_var})
    message(FATAL_ERROR "bridges.cmake: -D${_var}= is required")
  endif()
endforeach()
fresh_dir("${WORK}")
install_to("${WORK}/prefix")
file(MAKE_DIRECTORY "${WORK}/consumer")
file(WRITE "${WORK}/consumer/main.cpp" "int main() { return 0; }\n")
file(WRITE "${WORK}/consumer/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(bridge_consumer CXX)
find_package(dlbridge CONFIG REQUIRED)
add_executable(consumer main.cpp)
foreach(_b IN LISTS dlbridge_BRIDGES)
  if(TARGET dlbridge::${_b})
    message(STATUS "bridge defined: ${_b}")
    target_link_libraries(consumer PRIVATE dlbridge::${_b})
  else()
    message(STATUS "bridge missing: ${_b}")
  endif()
endforeach()
message(STATUS "bridges listed: [${dlbridge_BRIDGES}]")
]=])
# Where the build found Viskores outside the standard prefixes, a consumer says so too.
set(_viskores "")
if(VISKORES_PREFIX)
  set(_viskores "-DDLBRIDGE_VISKORES_PREFIX=${VISKORES_PREFIX}")
endif()
run("${CMAKE_COMMAND}" -S "${WORK}/consumer" -B "${WORK}/consumer/build" -G "${GENERATOR}"
    "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX}"
    "-DCMAKE_PREFIX_PATH=${WORK}/prefix" ${_viskores})
set(_configured "${RUN_OUTPUT}")
# BRIDGES arrives comma-separated (a list would split the -D argument).
string(REPLACE "," ";" _want "${BRIDGES}")
expect_in("${_configured}" "bridges listed: \\[${_want}\\]" "the installed list of bridges")
foreach(_b IN LISTS _want)
  expect_in("${_configured}" "bridge defined: ${_b}" "dlbridge::${_b} defined for the consumer")
endforeach()
run("${CMAKE_COMMAND}" --build "${WORK}/consumer/build")
