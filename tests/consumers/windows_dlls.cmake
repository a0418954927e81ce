# Windows finds a program's DLLs next to it: copy the DLLs each consumer links (dlbridge's, in
# the install's bin/ or the subproject's build folder) there after each build. Elsewhere, and
# for a static dlbridge, there is nothing to copy.
function(dlbridge_consumer_dlls)
  if(NOT WIN32)
    return()
  endif()
  get_target_property(_type dlbridge::dlbridge TYPE)
  if(NOT _type STREQUAL "SHARED_LIBRARY")
    return()
  endif()
  foreach(_target IN LISTS ARGN)
    add_custom_command(TARGET ${_target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_RUNTIME_DLLS:${_target}>
              $<TARGET_FILE_DIR:${_target}>
      COMMAND_EXPAND_LISTS)
  endforeach()
endfunction()
