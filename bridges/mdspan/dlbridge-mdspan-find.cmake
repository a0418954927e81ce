# dlbridge_find_mdspan(): which mdspan implementations this compiler has, for the build's
# tests. DLBRIDGE_STD_MDSPAN: <mdspan> with __cpp_lib_mdspan in C++23 (libstdc++ 16, libc++
# 18+). DLBRIDGE_KOKKOS_MDSPAN_INCLUDE_DIR: the folder holding Kokkos' reference
# <mdspan/mdspan.hpp> (namespace Kokkos; Debian's libkokkos-dev puts it in
# /usr/include/kokkos). The bridge's header itself names no implementation.
function(dlbridge_find_mdspan)
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
endfunction()
