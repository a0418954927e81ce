# What this machine has, for the defaults of the options at the top of CMakeLists.txt (included
# just before them): sets _dlb_default_<OPTION> for each option whose default depends on a
# header, a tool or an interpreter found here. Declares no option itself.

# GPU runtime backends (src/runtimes/runtime_<x>.cpp, cmake/DlbridgeRuntimes.cmake): only the runtime's
# headers are needed at build time, so a backend defaults to ON where they are found.
find_path(DLBRIDGE_CUDA_INCLUDE_DIR cuda.h
  HINTS "${CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}" "$ENV{CUDA_HOME}" /usr/local/cuda
  PATH_SUFFIXES include
  DOC "Directory holding the CUDA toolkit's cuda.h (types for the CUDA backend)")
find_path(DLBRIDGE_HIP_INCLUDE_DIR hip/hip_runtime_api.h
  HINTS "$ENV{ROCM_PATH}" "$ENV{HIP_PATH}" /opt/rocm
  PATH_SUFFIXES include
  DOC "Directory holding hip/hip_runtime_api.h (types for the HIP backend)")
find_path(DLBRIDGE_LEVEL_ZERO_INCLUDE_DIR level_zero/ze_api.h
  HINTS "$ENV{LEVEL_ZERO_ROOT}" "$ENV{ONEAPI_ROOT}"
  PATH_SUFFIXES include
  DOC "Directory holding level_zero/ze_api.h (types for the Level Zero backend)")
foreach(_rt CUDA HIP LEVEL_ZERO)
  set(_dlb_default_WITH_${_rt} OFF)
  if(DLBRIDGE_${_rt}_INCLUDE_DIR AND NOT WIN32)
    set(_dlb_default_WITH_${_rt} ON)
  endif()
endforeach()

# The API reference (cmake/DlbridgeDocs.cmake): ON for a top-level build where doxygen is.
set(_dlb_default_BUILD_DOCS OFF)
if(DLBRIDGE_IS_TOP_LEVEL OR DLBRIDGE_BUILD_DOCS)
  find_package(Doxygen QUIET)
  if(DLBRIDGE_IS_TOP_LEVEL AND DOXYGEN_FOUND)
    set(_dlb_default_BUILD_DOCS ON)
  endif()
endif()

# The Python module (python/): ON for a top-level build where Python 3's development files are
# found; looked for as a subproject only when asked, so that a consumer's Python settings are
# left alone. The interpreter: Python3_EXECUTABLE when given; otherwise the active virtual
# environment's (VIRTUAL_ENV set, or the python3 on PATH is a venv's); otherwise
# /usr/bin/python3 when it can import numpy (on Debian machines the first python3 on PATH may be
# another build without NumPy); otherwise whatever FindPython3 picks.
set(_dlb_default_BUILD_PYTHON OFF)
if(EXISTS "${PROJECT_SOURCE_DIR}/python/CMakeLists.txt" AND
   (DLBRIDGE_IS_TOP_LEVEL OR DLBRIDGE_BUILD_PYTHON) AND
   (NOT DEFINED DLBRIDGE_BUILD_PYTHON OR DLBRIDGE_BUILD_PYTHON))
  if(NOT DEFINED Python3_EXECUTABLE)
    # PY-33: a venv is where its user wants the module; FindPython3 looks there first when
    # VIRTUAL_ENV is set, but a venv's python3 merely first on PATH must be named.
    set(_dlb_py_venv OFF)
    if(NOT "$ENV{VIRTUAL_ENV}" STREQUAL "")
      set(_dlb_py_venv ON)
      if(NOT DEFINED Python3_FIND_VIRTUALENV)
        set(Python3_FIND_VIRTUALENV FIRST)
      endif()
    else()
      find_program(_dlb_py_on_path NAMES python3 python)
      if(_dlb_py_on_path)
        execute_process(COMMAND "${_dlb_py_on_path}" -c
                                "import sys; print(sys.executable if sys.prefix != sys.base_prefix else '')"
                        OUTPUT_VARIABLE _dlb_py_venv_python OUTPUT_STRIP_TRAILING_WHITESPACE
                        RESULT_VARIABLE _dlb_py_rc ERROR_QUIET)
        if(_dlb_py_rc EQUAL 0 AND NOT _dlb_py_venv_python STREQUAL "")
          set(_dlb_py_venv ON)
          set(Python3_EXECUTABLE "${_dlb_py_venv_python}" CACHE FILEPATH "The Python interpreter dlbridge's module is built for")
        endif()
      endif()
      unset(_dlb_py_on_path CACHE)
    endif()
    if(NOT _dlb_py_venv AND EXISTS /usr/bin/python3)
      execute_process(COMMAND /usr/bin/python3 -c "import numpy"
                      RESULT_VARIABLE _dlb_py_numpy OUTPUT_QUIET ERROR_QUIET)
      if(_dlb_py_numpy EQUAL 0)
        set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter dlbridge's module is built for")
      endif()
    endif()
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  # Not in sanitizer builds: a sanitized libdlbridge cannot be loaded into an unsanitized python.
  if(DLBRIDGE_IS_TOP_LEVEL AND Python3_Development.Module_FOUND AND Python3_Interpreter_FOUND
     AND NOT DLBRIDGE_SANITIZE)
    set(_dlb_default_BUILD_PYTHON ON)
  endif()
endif()
