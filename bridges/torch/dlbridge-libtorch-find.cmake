# dlbridge_find_libtorch(): libtorch's headers (ATen/DLConvertor.h) and its three libraries
# (libtorch, libtorch_cpu, libc10) as the cache variables DLBRIDGE_TORCH_INCLUDE_DIR,
# DLBRIDGE_TORCH_LIBRARY, DLBRIDGE_TORCH_CPU_LIBRARY and DLBRIDGE_C10_LIBRARY; sets
# DLBRIDGE_TORCH_FOUND when all four are found. One search for the bridge, the benchmarks and
# the installed dlbridge-torch.cmake alike.
macro(dlbridge_find_libtorch)
  find_path(DLBRIDGE_TORCH_INCLUDE_DIR ATen/DLConvertor.h)
  find_library(DLBRIDGE_TORCH_LIBRARY torch)
  find_library(DLBRIDGE_TORCH_CPU_LIBRARY torch_cpu)
  find_library(DLBRIDGE_C10_LIBRARY c10)
  set(DLBRIDGE_TORCH_FOUND OFF)
  if(DLBRIDGE_TORCH_INCLUDE_DIR AND DLBRIDGE_TORCH_LIBRARY AND DLBRIDGE_TORCH_CPU_LIBRARY AND
     DLBRIDGE_C10_LIBRARY)
    set(DLBRIDGE_TORCH_FOUND ON)
  endif()
endmacro()
