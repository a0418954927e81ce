# Installed beside dlbridgeConfig.cmake, which includes it: defines dlbridge::mdspan (the
# header-only mdspan bridge, <dlbridge/mdspan.h>). It names no mdspan implementation: the
# consumer's own std::mdspan or Kokkos::mdspan is the one its code includes.
if(NOT TARGET dlbridge::mdspan)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_mdspanTargets.cmake")
endif()
