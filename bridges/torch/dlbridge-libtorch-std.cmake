# dlbridge_libtorch_cxx_std(<include-dir> <out-var>): the C++ standard libtorch's headers need,
# read from the headers themselves: 20 where ATen/ATen.h stops older compilers with its own
# "C++20 or later" #error (libtorch 2.x), else 17 (libtorch 1.x). Used by the build and by the
# installed dlbridge-torch.cmake, so both ask for the same standard.
function(dlbridge_libtorch_cxx_std include_dir out)
  set(_std 17)
  if(EXISTS "${include_dir}/ATen/ATen.h")
    file(STRINGS "${include_dir}/ATen/ATen.h" _needs20 REGEX "C\\+\\+20 or later")
    if(_needs20)
      set(_std 20)
    endif()
  endif()
  set(${out} ${_std} PARENT_SCOPE)
endfunction()
