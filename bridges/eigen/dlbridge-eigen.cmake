# Installed beside dlbridgeConfig.cmake, which includes it: finds Eigen 3 and defines
# dlbridge::eigen (the header-only Eigen bridge, <dlbridge/eigen.h>). Without Eigen the
# target is left out and find_package(dlbridge) still succeeds: a consumer that does not use
# the bridge need not have Eigen.
if(NOT TARGET dlbridge::eigen)
  find_package(Eigen3 3.3 CONFIG QUIET)
  if(Eigen3_FOUND)
    include(CMakeFindDependencyMacro)
    find_dependency(Eigen3 3.3 CONFIG)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_eigenTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::eigen not defined: Eigen3 not found")
  endif()
endif()
