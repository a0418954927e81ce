/// @file
/// Symbol visibility: the shared library exports only what carries DLBRIDGE_API.
#pragma once

/// @def DLBRIDGE_API
/// Marks a declaration the library exports: default visibility (ELF, Mach-O); on Windows
/// dllexport while building dlbridge and dllimport for its users; empty when
/// DLBRIDGE_STATIC_DEFINE is defined (a static build: CMake defines it for its consumers).

#if defined(DLBRIDGE_STATIC_DEFINE)
#define DLBRIDGE_API
#elif defined(_WIN32)
#if defined(DLBRIDGE_BUILDING)
#define DLBRIDGE_API __declspec(dllexport)
#else
#define DLBRIDGE_API __declspec(dllimport)
#endif
#else
#define DLBRIDGE_API __attribute__((visibility("default")))
#endif
