# Install rules: the library, headers, the DLPack header (DLBRIDGE_INSTALL_DLPACK), a CMake
# package (dlbridge::dlbridge), pkg-config and the licence. Nothing installed names an
# absolute path: the prefix can be moved as a whole (spec/package.md PKG-1).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DLBRIDGE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/dlbridge")
set_target_properties(dlbridge_dlpack PROPERTIES EXPORT_NAME dlpack)
# PKG-11: a DLL is a RUNTIME file (bin/, where Windows looks beside the programs); its import
# library, like a static or ELF library, goes to lib/.
install(TARGETS dlbridge dlbridge_dlpack EXPORT dlbridgeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/dlbridge DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(DLBRIDGE_INSTALL_DLPACK)
  install(FILES "${DLBRIDGE_DLPACK_HEADER_DIR}/dlpack/dlpack.h"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/${DLBRIDGE_DLPACK_INSTALL_SUBDIR}/dlpack")
endif()
# C-21: find_package(dlbridge CONFIG) gives dlbridge::dlbridge (C++ and C, shared and static).
install(EXPORT dlbridgeTargets NAMESPACE dlbridge:: DESTINATION ${DLBRIDGE_CMAKE_DIR})
export(EXPORT dlbridgeTargets NAMESPACE dlbridge:: FILE "${PROJECT_BINARY_DIR}/dlbridgeTargets.cmake")
install(FILES LICENSE DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/dlbridge")

configure_package_config_file(cmake/dlbridgeConfig.cmake.in
  "${PROJECT_BINARY_DIR}/dlbridgeConfig.cmake" INSTALL_DESTINATION ${DLBRIDGE_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/dlbridgeConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/dlbridgeConfig.cmake" "${PROJECT_BINARY_DIR}/dlbridgeConfigVersion.cmake"
  DESTINATION ${DLBRIDGE_CMAKE_DIR})

# pkg-config: the installed DLPack header's directory, or nothing when the distribution's
# header is expected on the compiler's default search path.
if(BUILD_SHARED_LIBS)
  set(DLBRIDGE_PC_CFLAGS "")
else()
  set(DLBRIDGE_PC_CFLAGS " -DDLBRIDGE_STATIC_DEFINE")
endif()
if(DLBRIDGE_INSTALL_DLPACK)
  set(DLBRIDGE_PC_CFLAGS " -I\${includedir}/${DLBRIDGE_DLPACK_INSTALL_SUBDIR}${DLBRIDGE_PC_CFLAGS}")
endif()
set(DLBRIDGE_PC_DL_LIBS "")
foreach(_lib IN LISTS CMAKE_DL_LIBS)
  string(APPEND DLBRIDGE_PC_DL_LIBS " -l${_lib}")
endforeach()
# MinGW: libstdc++-6.dll keeps its thread-local state (std::call_once's) in the shared libgcc;
# a C program linked by gcc gets a static libgcc of its own, a second copy, and the static
# library's std::call_once then calls through a null pointer. g++ links the shared one.
if(MINGW)
  string(APPEND DLBRIDGE_PC_DL_LIBS " -shared-libgcc")
endif()
# C-24: the .pc file's prefix is relative to its own directory, so it works wherever it is put.
file(RELATIVE_PATH DLBRIDGE_PC_PREFIX_FROM_PCDIR "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" DLBRIDGE_PC_PREFIX_FROM_PCDIR "${DLBRIDGE_PC_PREFIX_FROM_PCDIR}")
configure_file(cmake/dlbridge.pc.in "${PROJECT_BINARY_DIR}/dlbridge.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/dlbridge.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
