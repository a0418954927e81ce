# Cross-compiling dlbridge for 64-bit Windows with Debian's MinGW-w64 (GCC, posix threads), and
# running what it builds under Wine: ctest runs every test through CMAKE_CROSSCOMPILING_EMULATOR.
# Used by scripts/test-windows and the `mingw` presets (CMakePresets.json); docs/windows.md.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(_dlb_triple x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${_dlb_triple}-gcc-posix)
set(CMAKE_CXX_COMPILER ${_dlb_triple}-g++-posix)
set(CMAKE_RC_COMPILER ${_dlb_triple}-windres)

# Headers and libraries come from the MinGW sysroot only, never from the host's /usr.
# Prefixes given in CMAKE_PREFIX_PATH hold Windows builds (an installed dlbridge, a staging
# folder): they are roots too, so find_package looks there and not under the sysroot.
set(CMAKE_FIND_ROOT_PATH /usr/${_dlb_triple} ${CMAKE_PREFIX_PATH})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Wine finds the MinGW runtime DLLs (libstdc++, libgcc_s_seh, libwinpthread) through WINEPATH,
# which scripts/test-windows sets; the emulator runs each test executable.
find_program(DLBRIDGE_WINE NAMES wine64 wine)
if(DLBRIDGE_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${DLBRIDGE_WINE})
endif()
