# dlbridge_find_eigen(): Eigen 3.3 to 5.x, for the build and for dlbridgeConfig.cmake alike
# (the finder convention of cmake/DlbridgeBridge.cmake: DLBRIDGE_EIGEN_FOUND, _FOUND_AS).
# One range, asked two ways: Eigen 5's version file takes a range (3.3...5), while Eigen 3's
# (SameMajorVersion) refuses any range spanning majors, so 3.x is asked for as "3.3" (3.3-3.x).
macro(dlbridge_find_eigen)
  find_package(Eigen3 3.3...5 CONFIG QUIET)
  if(NOT Eigen3_FOUND)
    find_package(Eigen3 3.3 CONFIG QUIET)
  endif()
  set(DLBRIDGE_EIGEN_FOUND OFF)
  if(TARGET Eigen3::Eigen)
    set(DLBRIDGE_EIGEN_FOUND ON)
    set(DLBRIDGE_EIGEN_FOUND_AS "Eigen ${Eigen3_VERSION}")
  endif()
endmacro()
