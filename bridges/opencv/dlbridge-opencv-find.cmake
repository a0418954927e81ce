# dlbridge_find_opencv(): OpenCV 4's core module, for the build and for dlbridgeConfig.cmake
# alike (the finder convention of cmake/DlbridgeBridge.cmake: DLBRIDGE_OPENCV_FOUND, _FOUND_AS).
macro(dlbridge_find_opencv)
  find_package(OpenCV 4 QUIET COMPONENTS core)
  set(DLBRIDGE_OPENCV_FOUND OFF)
  if(TARGET opencv_core)
    set(DLBRIDGE_OPENCV_FOUND ON)
    set(DLBRIDGE_OPENCV_FOUND_AS "OpenCV ${OpenCV_VERSION}")
  endif()
endmacro()
