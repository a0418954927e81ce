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

# install_to(<prefix>): `cmake --install` of BUILD_DIR (its CONFIG, where given) into <prefix>.
function(install_to prefix)
  set(_config "")
  if(CONFIG)
    set(_config --config "${CONFIG}")
  endif()
  run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" ${_config} --prefix "${prefix}")
endfunction()

# fresh_dir(<dir>): empty and recreate it.
function(fresh_dir dir)
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
endfunction()

# Cross builds (the Windows lane, scripts/test-windows): the scripts get -DTOOLCHAIN= (the
# toolchain file, for nested configures), -DEMULATOR= (what runs a built program, e.g. wine)
# and -DWINDOWS=ON. A Windows program finds its DLLs next to it, and takes no -rpath.
set(DLB_TOOLCHAIN_ARGS "")
if(TOOLCHAIN)
  set(DLB_TOOLCHAIN_ARGS "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN}")
endif()

# rpath_flag(<var> <libdir>): the linker flag that finds libdir's shared libraries at run time.
function(rpath_flag var libdir)
  if(WINDOWS)
    set(${var} "" PARENT_SCOPE)
  else()
    set(${var} "-Wl,-rpath,${libdir}" PARENT_SCOPE)
  endif()
endfunction()

# run_program(<program> <prefix>): runs a consumer built against the install at <prefix>
# (through EMULATOR; on Windows with the prefix's DLLs copied next to it first).
function(run_program program prefix)
  if(WINDOWS)
    file(GLOB _dlls "${prefix}/bin/*.dll")
    get_filename_component(_dir "${program}" DIRECTORY)
    if(_dlls)
      file(COPY ${_dlls} DESTINATION "${_dir}")
    endif()
    if(NOT program MATCHES "\\.exe$")
      string(APPEND program ".exe")  # what the compiler made of `-o <program>`
    endif()
  endif()
  run(${EMULATOR} "${program}")
  set(RUN_OUTPUT "${RUN_OUTPUT}" PARENT_SCOPE)
endfunction()
