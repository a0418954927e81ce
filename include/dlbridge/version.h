// dlbridge's version: the one place it is written (CMake reads it from here).
#pragma once

#define DLBRIDGE_VERSION_MAJOR 0
#define DLBRIDGE_VERSION_MINOR 1
#define DLBRIDGE_VERSION_PATCH 0
