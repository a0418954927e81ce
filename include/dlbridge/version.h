/// @file
/// dlbridge's version: the one place it is written (CMake reads it from here).
#pragma once

/// dlbridge's major version (also the shared library's SOVERSION).
#define DLBRIDGE_VERSION_MAJOR 0
/// dlbridge's minor version.
#define DLBRIDGE_VERSION_MINOR 1
/// dlbridge's patch version.
#define DLBRIDGE_VERSION_PATCH 0
