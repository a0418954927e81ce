// The identity of an import's release, for re-export: FromDLPack installs these releases
// (defined in src/dlpack/from_dlpack.cpp), and ToDLPack* recognises them to hand an unchanged
// import back instead of wrapping it.
#pragma once

namespace dlbridge {
namespace detail {

/// The release FromDLPack installs for a DLManagedTensorVersioned: calls its deleter.
void ReleaseImportedVersioned(void* managed) noexcept;
/// The release FromDLPack installs for a legacy DLManagedTensor: calls its deleter.
void ReleaseImportedLegacy(void* managed) noexcept;

}  // namespace detail
}  // namespace dlbridge
