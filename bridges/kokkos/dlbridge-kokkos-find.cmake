# dlbridge_find_kokkos(): Kokkos 5 for the build and for dlbridgeConfig.cmake alike, as the
# target dlbridge_kokkos_core (the finder convention of cmake/DlbridgeBridge.cmake:
# DLBRIDGE_KOKKOS_FOUND, _FOUND_AS; the bridge also needs dlbridge::mdspan, declared first). A Kokkos::kokkos the project already has (its own
# find_package(Kokkos), e.g. a CUDA build with its launcher) is used as it is. Otherwise
# Kokkos is found by its files, not its CMake package: Debian's libkokkos-dev 5.2.2-2 ships
# a package that names static libraries it does not install (libkokkosalgorithms.a,
# libkokkossimd.a), and find_package(Kokkos) then stops the whole configure. Found that way:
# <Kokkos_Core.hpp> (folder kokkos/ too), libkokkoscore, the version from KokkosCore_config.h
# (DLBRIDGE_KOKKOS_VERSION) and OpenMP where that Kokkos was built with it (a compiler without
# OpenMP, clang without libomp, leaves the bridge off). Sets DLBRIDGE_KOKKOS_FOUND.
macro(dlbridge_find_kokkos)
  set(DLBRIDGE_KOKKOS_FOUND OFF)
  if(NOT TARGET dlbridge::mdspan)
    # The bridge stands on the mdspan bridge: without it there is nothing to build.
  elseif(TARGET dlbridge_kokkos_core)
    set(DLBRIDGE_KOKKOS_FOUND ON)
  elseif(TARGET Kokkos::kokkos)
    add_library(dlbridge_kokkos_core INTERFACE IMPORTED)
    target_link_libraries(dlbridge_kokkos_core INTERFACE Kokkos::kokkos)
    set(DLBRIDGE_KOKKOS_VERSION "${Kokkos_VERSION}")
    set(DLBRIDGE_KOKKOS_FOUND ON)
  else()
    find_path(DLBRIDGE_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES kokkos)
    find_library(DLBRIDGE_KOKKOS_CORE_LIBRARY kokkoscore)
    set(_dlb_kokkos_ok OFF)
    if(DLBRIDGE_KOKKOS_INCLUDE_DIR AND DLBRIDGE_KOKKOS_CORE_LIBRARY AND
       EXISTS "${DLBRIDGE_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h")
      file(STRINGS "${DLBRIDGE_KOKKOS_INCLUDE_DIR}/KokkosCore_config.h" _dlb_kokkos_config
           REGEX "#define KOKKOS_(VERSION_(MAJOR|MINOR|PATCH) |ENABLE_OPENMP)")
      string(REGEX REPLACE ".*KOKKOS_VERSION_MAJOR ([0-9]+).*" "\\1" _dlb_kokkos_major "${_dlb_kokkos_config}")
      string(REGEX REPLACE ".*KOKKOS_VERSION_MINOR ([0-9]+).*" "\\1" _dlb_kokkos_minor "${_dlb_kokkos_config}")
      string(REGEX REPLACE ".*KOKKOS_VERSION_PATCH ([0-9]+).*" "\\1" _dlb_kokkos_patch "${_dlb_kokkos_config}")
      set(DLBRIDGE_KOKKOS_VERSION "${_dlb_kokkos_major}.${_dlb_kokkos_minor}.${_dlb_kokkos_patch}")
      set(_dlb_kokkos_ok ON)
      if(DLBRIDGE_KOKKOS_VERSION VERSION_LESS 5)
        set(_dlb_kokkos_ok OFF)
      endif()
      set(_dlb_kokkos_omp "")
      if(_dlb_kokkos_ok AND _dlb_kokkos_config MATCHES "KOKKOS_ENABLE_OPENMP")
        find_package(OpenMP QUIET COMPONENTS CXX)
        if(TARGET OpenMP::OpenMP_CXX)
          set(_dlb_kokkos_omp OpenMP::OpenMP_CXX)
        else()
          set(_dlb_kokkos_ok OFF)
        endif()
      endif()
    endif()
    if(_dlb_kokkos_ok)
      add_library(dlbridge_kokkos_core INTERFACE IMPORTED)
      set_target_properties(dlbridge_kokkos_core PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${DLBRIDGE_KOKKOS_INCLUDE_DIR}"
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${DLBRIDGE_KOKKOS_INCLUDE_DIR}"
        INTERFACE_COMPILE_FEATURES cxx_std_20
        INTERFACE_LINK_LIBRARIES "${DLBRIDGE_KOKKOS_CORE_LIBRARY};${_dlb_kokkos_omp};${CMAKE_DL_LIBS}")
      set(DLBRIDGE_KOKKOS_FOUND ON)
    endif()
  endif()
  if(DLBRIDGE_KOKKOS_FOUND)
    set(DLBRIDGE_KOKKOS_FOUND_AS "Kokkos ${DLBRIDGE_KOKKOS_VERSION}")
  endif()
endmacro()
