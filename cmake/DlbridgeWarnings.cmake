# Warnings (as errors when DLBRIDGE_WERROR) and sanitizers, for dlbridge's own targets only.
function(dlbridge_project_target target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion)
    if(DLBRIDGE_WERROR)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(DLBRIDGE_SANITIZE)
      target_compile_options(${target} PRIVATE -fsanitize=${DLBRIDGE_SANITIZE} -fno-omit-frame-pointer
                                               -fno-sanitize-recover=all)
      target_link_options(${target} PRIVATE -fsanitize=${DLBRIDGE_SANITIZE})
    endif()
  endif()
endfunction()
