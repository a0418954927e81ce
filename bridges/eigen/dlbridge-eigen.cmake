# Installed beside dlbridgeConfig.cmake, which includes it: finds Eigen 3.3-5.x and defines
# dlbridge::eigen (the header-only Eigen bridge, <dlbridge/eigen.h>). Without Eigen the
# target is left out and find_package(dlbridge) still succeeds: a consumer that does not use
# the bridge need not have Eigen.
if(NOT TARGET dlbridge::eigen)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-eigen-find.cmake")
  dlbridge_find_eigen()
  if(Eigen3_FOUND)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_eigenTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::eigen not defined: Eigen3 not found")
  endif()
endif()
