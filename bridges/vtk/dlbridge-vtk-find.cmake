# dlbridge_find_vtk(): VTK 9's CommonCore (all the bridge's library links), for the build and
# for dlbridgeConfig.cmake alike (the finder convention of cmake/DlbridgeBridge.cmake:
# DLBRIDGE_VTK_FOUND, _FOUND_AS).
macro(dlbridge_find_vtk)
  find_package(VTK 9 QUIET COMPONENTS CommonCore)
  set(DLBRIDGE_VTK_FOUND OFF)
  if(VTK_FOUND AND TARGET VTK::CommonCore)
    set(DLBRIDGE_VTK_FOUND ON)
    set(DLBRIDGE_VTK_FOUND_AS "VTK ${VTK_VERSION}")
  endif()
endmacro()
