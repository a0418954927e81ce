// The identity of an import's release, for re-export: FromDLPack installs these releases
// (defined in src/dlpack/from_dlpack.cpp), and ToDLPack* recognises them to hand an unchanged
// import back instead of wrapping it.
#pragma once

#include <type_traits>

#include "dlbridge/callbacks.h"
#include "dlbridge/dlpack_header.h"

namespace dlbridge {
namespace detail {

/// The release FromDLPack installs for a DLManagedTensorVersioned: calls its deleter.
void ReleaseImportedVersioned(void* managed) noexcept;
/// The release FromDLPack installs for a legacy DLManagedTensor: calls its deleter.
void ReleaseImportedLegacy(void* managed) noexcept;

/// The release an import of a `Managed` holds (the one above for its type).
template <class Managed>
constexpr ReleaseFunction kImportRelease =
    std::is_same_v<Managed, DLManagedTensor> ? &ReleaseImportedLegacy : &ReleaseImportedVersioned;

}  // namespace detail
}  // namespace dlbridge
