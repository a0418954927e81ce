// Symbol visibility: the shared library exports only what carries DLBRIDGE_API.
#pragma once

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
