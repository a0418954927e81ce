# The shared library exports only dlbridge's API (spec/c-api.md, C-20): dlb_* C functions and
# C++ symbols in namespace dlbridge. Anything else (DLPack, std template instantiations) is an
# ABI the library never promised. Run: cmake -DNM=<nm> -DLIB=<libdlbridge.so> -DSHARED=ON|OFF -P
if(NOT SHARED)
  message("SKIPPED: not an ELF shared library: a static library has no dynamic symbol table, "
          "and a Windows DLL's or a Mach-O library's exports are not what nm -D reads")
  return()
endif()
if(NOT NM OR NOT EXISTS "${LIB}")
  message(FATAL_ERROR "check_symbols: need NM (got '${NM}') and an existing LIB (got '${LIB}')")
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}"
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "check_symbols: ${NM} failed (${_rc}): ${_err}")
endif()
string(REPLACE "\n" ";" _lines "${_out}")
set(_bad "")
set(_count 0)
set(_c_count 0)
foreach(_line IN LISTS _lines)
  # "<address> <type> <name>"; the name may carry a version suffix (@VER).
  if(NOT _line MATCHES "^[0-9a-fA-F]+ +[A-Za-z] +([^ @]+)")
    continue()
  endif()
  set(_name "${CMAKE_MATCH_1}")
  math(EXPR _count "${_count} + 1")
  if(_name MATCHES "^dlb_[A-Za-z0-9_]+$")
    math(EXPR _c_count "${_c_count} + 1")
  elseif(_name MATCHES "^_ZN[KVRO]*8dlbridge" OR _name MATCHES "^_ZT[ISV]N8dlbridge")
    # Functions and members (const ones mangle as _ZNK), typeinfo, typeinfo name, vtable.
  else()
    list(APPEND _bad "${_line}")
  endif()
endforeach()
if(_bad)
  list(JOIN _bad "\n  " _text)
  message(FATAL_ERROR "check_symbols: ${LIB} exports symbols outside dlb_* and dlbridge::\n  "
                      "${_text}")
endif()
if(_c_count EQUAL 0)
  message(FATAL_ERROR "check_symbols: no dlb_* symbol exported by ${LIB}")
endif()
message("check_symbols: ${_count} exported symbols, ${_c_count} of them dlb_*, all dlbridge's")
