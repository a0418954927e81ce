// The DLPack header every public dlbridge header includes, and the check that it is >= 1.0
// (spec/package.md PKG-2: enforced here).
//
// A 0.x header (Debian bookworm's libdlpack-dev, or libtorch's ATen/dlpack.h, which uses the
// same include guard) has no versioned tensors; without this check a build would fail later
// with unrelated-looking errors about missing DLPack 1.x names.
#pragma once

#include <dlpack/dlpack.h>

#if !defined(DLPACK_MAJOR_VERSION)
#if defined(DLPACK_VERSION) && DLPACK_VERSION == 80
#error "dlbridge needs a DLPack >= 1.0 header, but the dlpack/dlpack.h already included is DLPack 0.8 (DLPACK_VERSION 80). Include dlbridge's headers before any other DLPack header (libtorch's ATen/dlpack.h shares its include guard), or put a DLPack 1.x include directory first on the include path (scripts/setup fetches one; dlbridge's install ships one under include/dlbridge/dlpack-1)."
#elif defined(DLPACK_VERSION) && DLPACK_VERSION == 70
#error "dlbridge needs a DLPack >= 1.0 header, but the dlpack/dlpack.h already included is DLPack 0.7 (DLPACK_VERSION 70). Include dlbridge's headers before any other DLPack header (libtorch's ATen/dlpack.h shares its include guard), or put a DLPack 1.x include directory first on the include path (scripts/setup fetches one; dlbridge's install ships one under include/dlbridge/dlpack-1)."
#elif defined(DLPACK_VERSION) && DLPACK_VERSION == 60
#error "dlbridge needs a DLPack >= 1.0 header, but the dlpack/dlpack.h already included is DLPack 0.6 (DLPACK_VERSION 60: Debian bookworm's libdlpack-dev, or libtorch's ATen/dlpack.h). Include dlbridge's headers before any other DLPack header (ATen/dlpack.h shares its include guard), or put a DLPack 1.x include directory first on the include path (scripts/setup fetches one; dlbridge's install ships one under include/dlbridge/dlpack-1)."
#elif defined(DLPACK_VERSION)
#error "dlbridge needs a DLPack >= 1.0 header, but the dlpack/dlpack.h already included is a 0.x header (it defines DLPACK_VERSION, not DLPACK_MAJOR_VERSION). Include dlbridge's headers before any other DLPack header (libtorch's ATen/dlpack.h shares its include guard), or put a DLPack 1.x include directory first on the include path (scripts/setup fetches one; dlbridge's install ships one under include/dlbridge/dlpack-1)."
#else
#error "dlbridge needs a DLPack >= 1.0 header, but the dlpack/dlpack.h found defines no DLPACK_MAJOR_VERSION. Put a DLPack 1.x include directory first on the include path (scripts/setup fetches one; dlbridge's install ships one under include/dlbridge/dlpack-1)."
#endif
#define DLBRIDGE_DLPACK_HEADER_UNUSABLE 1
#elif DLPACK_MAJOR_VERSION != 1
#error "dlbridge speaks DLPack 1.x; the dlpack/dlpack.h found has another major version (DLPACK_MAJOR_VERSION != 1). Point the include path at a DLPack 1.x header."
#define DLBRIDGE_DLPACK_HEADER_UNUSABLE 1
#endif

#if defined(DLBRIDGE_DLPACK_HEADER_UNUSABLE)
// #error does not stop the compiler, and every later line would fail on a missing DLPack 1.x
// name; a missing include does stop it, so the message above is the one a user reads.
#include <dlbridge-stops-here-see-the-DLPack-error-above>
#endif
