# The libtorch bridge's finder, for the build, the benchmarks and dlbridgeConfig.cmake alike
# (the finder convention of cmake/DlbridgeBridge.cmake). No absolute path is installed:
# libtorch is found where the consumer has it.
#
# dlbridge_find_libtorch(): libtorch's headers (ATen/DLConvertor.h) and its three libraries
# (libtorch, libtorch_cpu, libc10) as the cache variables DLBRIDGE_TORCH_INCLUDE_DIR,
# DLBRIDGE_TORCH_LIBRARY, DLBRIDGE_TORCH_CPU_LIBRARY and DLBRIDGE_C10_LIBRARY, and the C++
# standard its headers need as DLBRIDGE_TORCH_CXX_STD: 20 where ATen/ATen.h stops older
# compilers with its own "C++20 or later" #error (libtorch 2.x), else 17 (libtorch 1.x). Sets
# DLBRIDGE_TORCH_FOUND when all four are found.
macro(dlbridge_find_libtorch)
  find_path(DLBRIDGE_TORCH_INCLUDE_DIR ATen/DLConvertor.h)
  find_library(DLBRIDGE_TORCH_LIBRARY torch)
  find_library(DLBRIDGE_TORCH_CPU_LIBRARY torch_cpu)
  find_library(DLBRIDGE_C10_LIBRARY c10)
  set(DLBRIDGE_TORCH_FOUND OFF)
  if(DLBRIDGE_TORCH_INCLUDE_DIR AND DLBRIDGE_TORCH_LIBRARY AND DLBRIDGE_TORCH_CPU_LIBRARY AND
     DLBRIDGE_C10_LIBRARY)
    set(DLBRIDGE_TORCH_FOUND ON)
    set(DLBRIDGE_TORCH_CXX_STD 17)
    if(EXISTS "${DLBRIDGE_TORCH_INCLUDE_DIR}/ATen/ATen.h")
      file(STRINGS "${DLBRIDGE_TORCH_INCLUDE_DIR}/ATen/ATen.h" _dlb_torch_needs20
           REGEX "C\\+\\+20 or later")
      if(_dlb_torch_needs20)
        set(DLBRIDGE_TORCH_CXX_STD 20)
      endif()
    endif()
  endif()
endmacro()

# dlbridge_find_torch(): dlbridge_find_libtorch(), then libtorch as one target,
# dlbridge_torch_libtorch: its headers as SYSTEM (they do not pass the project's warnings) and
# its three libraries. Sets DLBRIDGE_TORCH_FOUND_AS.
macro(dlbridge_find_torch)
  dlbridge_find_libtorch()
  if(DLBRIDGE_TORCH_FOUND)
    set(DLBRIDGE_TORCH_FOUND_AS "${DLBRIDGE_TORCH_LIBRARY}, C++${DLBRIDGE_TORCH_CXX_STD}")
    if(NOT TARGET dlbridge_torch_libtorch)
      add_library(dlbridge_torch_libtorch INTERFACE IMPORTED)
      set_target_properties(dlbridge_torch_libtorch PROPERTIES
        INTERFACE_COMPILE_FEATURES "cxx_std_${DLBRIDGE_TORCH_CXX_STD}"
        INTERFACE_INCLUDE_DIRECTORIES
          "${DLBRIDGE_TORCH_INCLUDE_DIR};${DLBRIDGE_TORCH_INCLUDE_DIR}/torch/csrc/api/include"
        INTERFACE_SYSTEM_INCLUDE_DIRECTORIES
          "${DLBRIDGE_TORCH_INCLUDE_DIR};${DLBRIDGE_TORCH_INCLUDE_DIR}/torch/csrc/api/include"
        INTERFACE_LINK_LIBRARIES
          "${DLBRIDGE_TORCH_LIBRARY};${DLBRIDGE_TORCH_CPU_LIBRARY};${DLBRIDGE_C10_LIBRARY}")
    endif()
  endif()
endmacro()
