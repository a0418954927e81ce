# Installed beside dlbridgeConfig.cmake, which includes it: finds Kokkos 5 as the build did
# (dlbridge-kokkos-find.cmake: the consumer's Kokkos::kokkos if it has one, else Kokkos' files)
# and defines dlbridge::kokkos (the header-only Kokkos bridge, <dlbridge/kokkos.h>, on
# dlbridge::mdspan). Without Kokkos the target is left out and find_package(dlbridge) still
# succeeds.
if(NOT TARGET dlbridge::kokkos)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-mdspan.cmake" OPTIONAL)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-kokkos-find.cmake")
  dlbridge_find_kokkos()
  if(DLBRIDGE_KOKKOS_FOUND AND TARGET dlbridge::mdspan)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_kokkosTargets.cmake")
  elseif(NOT dlbridge_FIND_QUIETLY)
    message(STATUS "dlbridge: dlbridge::kokkos not defined: Kokkos 5 not found")
  endif()
endif()
