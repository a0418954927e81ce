# Install rules: the library, headers, a CMake package (dlbridge::dlbridge) and pkg-config.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DLBRIDGE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/dlbridge")
install(TARGETS dlbridge EXPORT dlbridgeTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/dlbridge DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT dlbridgeTargets NAMESPACE dlbridge:: DESTINATION ${DLBRIDGE_CMAKE_DIR})
export(EXPORT dlbridgeTargets NAMESPACE dlbridge:: FILE "${PROJECT_BINARY_DIR}/dlbridgeTargets.cmake")

# Consumers find the same DLPack header dlbridge was built against.
if(DLBRIDGE_DLPACK_FROM_PACKAGE)
  get_filename_component(DLBRIDGE_DLPACK_CONFIG_DIR "${dlpack_DIR}" ABSOLUTE)
else()
  set(DLBRIDGE_DLPACK_CONFIG_DIR "")
endif()
configure_package_config_file(cmake/dlbridgeConfig.cmake.in
  "${PROJECT_BINARY_DIR}/dlbridgeConfig.cmake" INSTALL_DESTINATION ${DLBRIDGE_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/dlbridgeConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/dlbridgeConfig.cmake" "${PROJECT_BINARY_DIR}/dlbridgeConfigVersion.cmake"
  DESTINATION ${DLBRIDGE_CMAKE_DIR})

if(BUILD_SHARED_LIBS)
  set(DLBRIDGE_PC_CFLAGS "")
else()
  set(DLBRIDGE_PC_CFLAGS "-DDLBRIDGE_STATIC_DEFINE")
endif()
file(RELATIVE_PATH DLBRIDGE_PC_PREFIX_FROM_PCDIR "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" DLBRIDGE_PC_PREFIX_FROM_PCDIR "${DLBRIDGE_PC_PREFIX_FROM_PCDIR}")
configure_file(cmake/dlbridge.pc.in "${PROJECT_BINARY_DIR}/dlbridge.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/dlbridge.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
