# Installed beside dlbridgeConfig.cmake, which includes it: finds OpenCV 4's core module and
# defines dlbridge::opencv (the header-only OpenCV bridge, <dlbridge/opencv.h>). Without OpenCV
# the target is left out and find_package(dlbridge) still succeeds: a consumer that does not
# use the bridge need not have OpenCV (as for dlbridge::eigen).
if(NOT TARGET dlbridge::opencv)
  find_package(OpenCV 4 QUIET COMPONENTS core)
  if(TARGET opencv_core)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_opencvTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::opencv not defined: OpenCV 4 (core) not found")
  endif()
endif()
