# PKG-7: libdlbridge exports no symbol of namespace dlbridge::testing, built or installed.
# WITHOUT is the built libdlbridge; WITH (optional) dlbridge_testing, which must export some, so
# that the pattern below is known to find them; BUILD_DIR (optional) is installed into
# WORK/prefix as docs/building.md's plain recipe installs it (cmake --install), and the installed
# LIBDIR/LIBNAME is checked too.
# Run: cmake -DNM=<nm> -DWITHOUT=<lib> [-DWITH=<lib>] [-DBUILD_DIR=<dir> -DWORK=<dir>
#      -DCONFIG=<config> -DLIBDIR=<lib dir> -DLIBNAME=<file name>] -DSHARED=ON|OFF -P testing_hooks.cmake
if(NOT SHARED)
  message("SKIPPED: not an ELF shared library: a static library has no dynamic symbol table, "
          "and a Windows DLL's or a Mach-O library's exports are not what nm -D reads")
  return()
endif()

# testing_symbols(<lib> <out var>): the dynamic symbols <lib> defines in dlbridge::testing.
function(testing_symbols lib out)
  execute_process(COMMAND "${NM}" -D --defined-only "${lib}" OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --defined-only ${lib} failed (${_rc}): ${_err}")
  endif()
  string(REGEX MATCHALL "[^ \n]*N[KRO]*8dlbridge7testing[^ \n]*" _found "${_out}")  # _ZNK: const
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

function(expect_none lib what)
  testing_symbols("${lib}" _without)
  if(_without)
    string(REPLACE ";" "\n  " _list "${_without}")
    message(FATAL_ERROR "${lib} (${what}) exports test hooks:\n  ${_list}")
  endif()
  message("${what}: no dlbridge::testing symbol in ${lib}")
endfunction()

if(WITH)
  testing_symbols("${WITH}" _with)
  list(LENGTH _with _n)
  if(_n EQUAL 0)
    message(FATAL_ERROR "${WITH} (dlbridge_testing) exports no dlbridge::testing symbol: "
                        "the pattern no longer finds them")
  endif()
  message("dlbridge_testing: ${_n} dlbridge::testing symbols in ${WITH}")
endif()
expect_none("${WITHOUT}" "the built library")
if(BUILD_DIR)
  file(REMOVE_RECURSE "${WORK}")
  execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/prefix"
                          --config "${CONFIG}"
                  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "cmake --install ${BUILD_DIR} failed (${_rc}):\n${_out}${_err}")
  endif()
  if(NOT EXISTS "${WORK}/prefix/${LIBDIR}/${LIBNAME}")
    message(FATAL_ERROR "the install has no ${LIBDIR}/${LIBNAME}")
  endif()
  expect_none("${WORK}/prefix/${LIBDIR}/${LIBNAME}" "the default install")
  file(GLOB _installed RELATIVE "${WORK}/prefix/${LIBDIR}" "${WORK}/prefix/${LIBDIR}/*testing*")
  if(_installed)
    message(FATAL_ERROR "the install holds a testing library: ${_installed}")
  endif()
endif()
