# dlbridge::vtk, the VTK bridge, for find_package(dlbridge): included by dlbridgeConfig.cmake
# when this file is installed. It needs VTK 9's CommonCore, found here.
include(CMakeFindDependencyMacro)
find_dependency(VTK 9 COMPONENTS CommonCore)
if(NOT TARGET dlbridge::vtk)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_vtkTargets.cmake")
endif()
