# PKG-7: libdlbridge without the test hooks (DLBRIDGE_TESTING_HOOKS=OFF) exports no symbol of
# namespace dlbridge::testing. WITHOUT is such a library; WITH (optional) one with the hooks,
# which must export some, so that the pattern below is known to find them.
# Run: cmake -DNM=<nm> -DWITHOUT=<lib> [-DWITH=<lib>] -DSHARED=ON|OFF -P testing_hooks.cmake
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

if(WITH)
  testing_symbols("${WITH}" _with)
  list(LENGTH _with _n)
  if(_n EQUAL 0)
    message(FATAL_ERROR "${WITH} (built with the hooks) exports no dlbridge::testing symbol: "
                        "the pattern no longer finds them")
  endif()
  message("with the hooks: ${_n} dlbridge::testing symbols in ${WITH}")
endif()
testing_symbols("${WITHOUT}" _without)
if(_without)
  string(REPLACE ";" "\n  " _list "${_without}")
  message(FATAL_ERROR "${WITHOUT}, built without the test hooks, exports:\n  ${_list}")
endif()
message("without the hooks: no dlbridge::testing symbol in ${WITHOUT}")
