# dlbridge_find_mdspan(): which mdspan implementations this compiler has (the finder convention
# of cmake/DlbridgeBridge.cmake: DLBRIDGE_MDSPAN_FOUND, _FOUND_AS). DLBRIDGE_STD_MDSPAN:
# <mdspan> with __cpp_lib_mdspan in C++23 (libstdc++ 16, libc++ 18+).
# DLBRIDGE_KOKKOS_MDSPAN_INCLUDE_DIR: the folder holding Kokkos' reference <mdspan/mdspan.hpp>
# (namespace Kokkos; Debian's libkokkos-dev puts it in a kokkos/ include folder). The bridge's
# header names no implementation, so an installed bridge needs none found
# (DLBRIDGE_FINDING_INSTALLED, set by dlbridgeConfig.cmake): the consumer's own mdspan is the
# one its code includes. The build needs one to test the bridge.
function(dlbridge_find_mdspan)
  if(DLBRIDGE_FINDING_INSTALLED)
    set(DLBRIDGE_MDSPAN_FOUND ON PARENT_SCOPE)
    return()
  endif()
  include(CheckCXXSourceCompiles)
  set(CMAKE_CXX_STANDARD 23)
  set(CMAKE_CXX_STANDARD_REQUIRED ON)
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles([=[
#include <mdspan>
#ifndef __cpp_lib_mdspan
#error no std::mdspan
#endif
int main() { return std::mdspan<int, std::dextents<int, 1>>().extent(0); }
]=] DLBRIDGE_STD_MDSPAN)
  find_path(DLBRIDGE_KOKKOS_MDSPAN_INCLUDE_DIR mdspan/mdspan.hpp PATH_SUFFIXES kokkos)
  set(kinds "")
  if(DLBRIDGE_STD_MDSPAN)
    list(APPEND kinds "std::mdspan")
  endif()
  if(DLBRIDGE_KOKKOS_MDSPAN_INCLUDE_DIR)
    list(APPEND kinds "Kokkos::mdspan")
  endif()
  list(JOIN kinds ", " kinds)
  set(DLBRIDGE_MDSPAN_FOUND OFF PARENT_SCOPE)
  if(kinds)
    set(DLBRIDGE_MDSPAN_FOUND ON PARENT_SCOPE)
    set(DLBRIDGE_MDSPAN_FOUND_AS "${kinds}" PARENT_SCOPE)
  endif()
endfunction()
