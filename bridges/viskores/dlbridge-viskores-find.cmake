# Finds the Viskores the Viskores bridge builds against, in this order, and defines
# dlbridge_viskores_core (an INTERFACE target naming it) with DLBRIDGE_VISKORES_FOUND and
# DLBRIDGE_VISKORES_FROM (and _FOUND_AS, the finder convention of cmake/DlbridgeBridge.cmake):
#  1. the Viskores that VTK 9.6 and later carry (target VTK::vtkviskores; Debian unstable's libvtk9-dev): first, so that the bridge and VTK's
#     vtkmDataArray (see VTK-13) share one Viskores;
#  2. a Viskores install (find_package(Viskores): Viskores 1.1 or later; the prefix given by
#     DLBRIDGE_VISKORES_PREFIX (a variable or the environment's), or CMAKE_PREFIX_PATH). The
#     build points DLBRIDGE_VISKORES_PREFIX at the cache scripts/setup-viskores fills; this file
#     names no path of its own, since it is installed.
# Included by dlbridge_add_bridge and, installed, by dlbridgeConfig.cmake.
macro(dlbridge_find_viskores)
  set(DLBRIDGE_VISKORES_FOUND FALSE)
  if(NOT TARGET dlbridge_viskores_core)
    # VTK's `vtkviskores` module has no component name that works from VTK 9.6 on: asking for
    # the accelerators (which need it) brings its target in, and only their dependencies.
    find_package(VTK 9.6 QUIET COMPONENTS AcceleratorsVTKmCore)
    if(TARGET VTK::vtkviskores)
      add_library(dlbridge_viskores_core INTERFACE IMPORTED)
      target_link_libraries(dlbridge_viskores_core INTERFACE VTK::vtkviskores)
      set(DLBRIDGE_VISKORES_FROM "the Viskores of VTK ${VTK_VERSION} (VTK::vtkviskores)")
    else()
      if(NOT DEFINED DLBRIDGE_VISKORES_PREFIX AND DEFINED ENV{DLBRIDGE_VISKORES_PREFIX})
        set(DLBRIDGE_VISKORES_PREFIX "$ENV{DLBRIDGE_VISKORES_PREFIX}")
      endif()
      find_package(Viskores 1.1 QUIET CONFIG
                   HINTS ${DLBRIDGE_VISKORES_PREFIX})
      if(Viskores_FOUND AND TARGET viskores::cont)
        add_library(dlbridge_viskores_core INTERFACE IMPORTED)
        target_link_libraries(dlbridge_viskores_core INTERFACE viskores::cont)
        set(DLBRIDGE_VISKORES_FROM "Viskores ${Viskores_VERSION} (${Viskores_DIR})")
      endif()
    endif()
  endif()
  if(TARGET dlbridge_viskores_core)
    set(DLBRIDGE_VISKORES_FOUND TRUE)
    set(DLBRIDGE_VISKORES_FOUND_AS "${DLBRIDGE_VISKORES_FROM}")
  endif()
endmacro()
