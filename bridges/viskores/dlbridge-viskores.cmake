# Installed beside dlbridgeConfig.cmake, which includes it: finds Viskores as the build did
# (dlbridge-viskores-find.cmake) and defines dlbridge::viskores (the header-only Viskores
# bridge, <dlbridge/viskores.h>). Without Viskores the target is left out and
# find_package(dlbridge) still succeeds.
if(NOT TARGET dlbridge::viskores)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-viskores-find.cmake")
  dlbridge_find_viskores()
  if(DLBRIDGE_VISKORES_FOUND)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_viskoresTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::viskores not defined: no Viskores found")
  endif()
endif()
