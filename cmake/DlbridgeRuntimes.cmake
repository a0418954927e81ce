# GPU runtime backends (spec/device-map.md GPU-*): src/runtimes/runtime_<x>.cpp (listed in the top-level
# add_library) load their runtime with dlopen on first use, so only the runtime's headers are
# needed at build time and nothing is linked but the dl library. DLBRIDGE_WITH_<X> (an option at
# the top of CMakeLists.txt) defaults to ON when cmake/DlbridgeDetect.cmake found the headers
# (DLBRIDGE_<X>_INCLUDE_DIR); OFF builds a backend that reports "not built".
target_link_libraries(dlbridge PRIVATE ${CMAKE_DL_LIBS})

function(_dlbridge_runtime_backend rt source)
  if(DLBRIDGE_WITH_${rt})
    if(NOT DLBRIDGE_${rt}_INCLUDE_DIR)
      message(FATAL_ERROR "dlbridge: DLBRIDGE_WITH_${rt}=ON but its headers were not found; set "
                          "DLBRIDGE_${rt}_INCLUDE_DIR or configure with -DDLBRIDGE_WITH_${rt}=OFF")
    endif()
    set(_opts "")
    # Only as a system directory (the toolkit's headers are not warning-clean), and never an
    # implicit one such as /usr/include (-isystem would reorder it before libstdc++'s).
    list(FIND CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES "${DLBRIDGE_${rt}_INCLUDE_DIR}" _implicit)
    if(_implicit EQUAL -1)
      set(_opts "-isystem;${DLBRIDGE_${rt}_INCLUDE_DIR}")
    endif()
    set_source_files_properties("${PROJECT_SOURCE_DIR}/${source}" PROPERTIES
      COMPILE_DEFINITIONS "DLBRIDGE_WITH_${rt}=1" COMPILE_OPTIONS "${_opts}")
    message(STATUS "dlbridge: ${rt} backend ON (headers in ${DLBRIDGE_${rt}_INCLUDE_DIR})")
  else()
    set_source_files_properties("${PROJECT_SOURCE_DIR}/${source}" PROPERTIES
      COMPILE_DEFINITIONS "DLBRIDGE_WITH_${rt}=0")
    message(STATUS "dlbridge: ${rt} backend OFF")
  endif()
endfunction()
_dlbridge_runtime_backend(CUDA src/runtimes/runtime_cuda.cpp)
_dlbridge_runtime_backend(HIP src/runtimes/runtime_hip.cpp)
_dlbridge_runtime_backend(LEVEL_ZERO src/runtimes/runtime_level_zero.cpp)

# What tests/test_runtime.cpp may expect on this machine (tests/CMakeLists.txt adds these).
set(DLBRIDGE_RUNTIME_TEST_DEFINITIONS "")
foreach(_rt CUDA HIP LEVEL_ZERO)
  if(DLBRIDGE_WITH_${_rt})
    list(APPEND DLBRIDGE_RUNTIME_TEST_DEFINITIONS "DLBRIDGE_TEST_WITH_${_rt}=1")
  else()
    list(APPEND DLBRIDGE_RUNTIME_TEST_DEFINITIONS "DLBRIDGE_TEST_WITH_${_rt}=0")
  endif()
endforeach()
# The toolkit's link stub (the stub test, see GPU-2) is a Linux ELF library: only a Linux target can load
# it. A Windows toolkit has an import library there (lib/x64/cuda.lib), which nothing loads, so a
# Windows build (the MinGW cross build given the toolkit's headers) has no stub to test with;
# loading the Linux one fails with Windows error 193 (not a valid application).
if(DLBRIDGE_WITH_CUDA AND DLBRIDGE_CUDA_INCLUDE_DIR AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  get_filename_component(_dlb_cuda_root "${DLBRIDGE_CUDA_INCLUDE_DIR}" DIRECTORY)
  foreach(_stub "${_dlb_cuda_root}/lib64/stubs/libcuda.so" "${_dlb_cuda_root}/lib/stubs/libcuda.so")
    if(EXISTS "${_stub}")
      # An ELF file for the target's processor (e_machine, bytes 18-19, little-endian): a cross
      # build for another processor cannot load the build machine's stub either.
      file(READ "${_stub}" _head LIMIT 20 HEX)
      string(SUBSTRING "${_head}" 36 4 _machine)
      set(_want "")
      if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
        set(_want "3e00")
      elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
        set(_want "b700")
      elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^ppc64")
        set(_want "1500")
      endif()
      if(_head MATCHES "^7f454c46" AND _machine STREQUAL _want)
        list(APPEND DLBRIDGE_RUNTIME_TEST_DEFINITIONS "DLBRIDGE_TEST_CUDA_STUB=\"${_stub}\"")
      endif()
      break()
    endif()
  endforeach()
endif()
find_library(DLBRIDGE_TEST_HIP_LIBRARY NAMES libamdhip64.so.7 libamdhip64.so.6 libamdhip64.so.5
             HINTS "$ENV{ROCM_PATH}/lib" /opt/rocm/lib DOC "A HIP runtime for the tests")
find_library(DLBRIDGE_TEST_ZE_LIBRARY NAMES libze_loader.so.1 DOC "A Level Zero loader for the tests")
mark_as_advanced(DLBRIDGE_TEST_HIP_LIBRARY DLBRIDGE_TEST_ZE_LIBRARY)
if(DLBRIDGE_TEST_HIP_LIBRARY)
  list(APPEND DLBRIDGE_RUNTIME_TEST_DEFINITIONS "DLBRIDGE_TEST_HIP_INSTALLED=1")
endif()
if(DLBRIDGE_TEST_ZE_LIBRARY)
  list(APPEND DLBRIDGE_RUNTIME_TEST_DEFINITIONS "DLBRIDGE_TEST_ZE_INSTALLED=1")
endif()
