# dlbridge::vtk, the VTK bridge, for find_package(dlbridge): included by dlbridgeConfig.cmake
# when this file is installed. It needs VTK 9's CommonCore. Without VTK the target is left out
# and find_package(dlbridge) still succeeds: a consumer that does not use the bridge need not
# have VTK (as for dlbridge::eigen and dlbridge::torch).
if(NOT TARGET dlbridge::vtk)
  find_package(VTK 9 QUIET COMPONENTS CommonCore)
  if(VTK_FOUND)
    include(CMakeFindDependencyMacro)
    find_dependency(VTK 9 COMPONENTS CommonCore)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_vtkTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::vtk not defined: VTK 9 (CommonCore) not found")
  endif()
endif()
