# dlbridge::torch, the libtorch bridge, for find_package(dlbridge): included by
# dlbridgeConfig.cmake when the bridge is installed. libtorch is found the way the build found
# it (its headers and libtorch, libtorch_cpu, libc10), so no absolute path is installed.
if(NOT TARGET dlbridge::torch)
  include(CMakeFindDependencyMacro)
  include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-libtorch-find.cmake")
  dlbridge_find_libtorch()
  if(DLBRIDGE_TORCH_FOUND)
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge-libtorch-std.cmake")
    dlbridge_libtorch_cxx_std("${DLBRIDGE_TORCH_INCLUDE_DIR}" _dlb_torch_std)
    add_library(dlbridge::libtorch INTERFACE IMPORTED)
    set_target_properties(dlbridge::libtorch PROPERTIES
      INTERFACE_COMPILE_FEATURES "cxx_std_${_dlb_torch_std}"
      INTERFACE_INCLUDE_DIRECTORIES
        "${DLBRIDGE_TORCH_INCLUDE_DIR};${DLBRIDGE_TORCH_INCLUDE_DIR}/torch/csrc/api/include"
      INTERFACE_SYSTEM_INCLUDE_DIRECTORIES
        "${DLBRIDGE_TORCH_INCLUDE_DIR};${DLBRIDGE_TORCH_INCLUDE_DIR}/torch/csrc/api/include"
      INTERFACE_LINK_LIBRARIES
        "${DLBRIDGE_TORCH_LIBRARY};${DLBRIDGE_TORCH_CPU_LIBRARY};${DLBRIDGE_C10_LIBRARY}")
    include("${CMAKE_CURRENT_LIST_DIR}/dlbridge_torchTargets.cmake")
  else()
    message(STATUS "dlbridge: the torch bridge is installed but libtorch is not found; "
                   "dlbridge::torch is not defined")
  endif()
endif()
