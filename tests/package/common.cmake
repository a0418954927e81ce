# Helpers for the package test scripts.

# run(<command...>): runs it, prints it with its output, fails the test on a non-zero exit.
# The output is left in RUN_OUTPUT.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REPLACE ";" " " _cmd "${ARGN}")
  message("$ ${_cmd}\n${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "failed (${_rc}): ${_cmd}")
  endif()
  set(RUN_OUTPUT "${_out}" PARENT_SCOPE)
endfunction()

# run_expect_failure(<command...>): the command must fail; its output is left in RUN_OUTPUT.
function(run_expect_failure)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REPLACE ";" " " _cmd "${ARGN}")
  message("$ ${_cmd}\n${_out}")
  if(_rc EQUAL 0)
    message(FATAL_ERROR "expected a failure, but it succeeded: ${_cmd}")
  endif()
  set(RUN_OUTPUT "${_out}" PARENT_SCOPE)
endfunction()

# expect_in(<text> <regex> <what>): fails the test unless <regex> matches <text>.
function(expect_in text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "expected ${what} (/${regex}/) in the output above")
  endif()
endfunction()

# expect_none_of(<text> <what> <path>...): fails the test when <text> contains any <path>.
function(expect_none_of text what)
  foreach(_path IN LISTS ARGN)
    string(FIND "${text}" "${_path}" _at)
    if(NOT _at EQUAL -1)
      message(FATAL_ERROR "${what}: ${_path}")
    endif()
  endforeach()
endfunction()

# fresh_dir(<dir>): empty and recreate it.
function(fresh_dir dir)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
endfunction()
