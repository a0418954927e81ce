/// @file
/// Dtype names: a DLDataType as text and back, both directions from the core's one dtype
/// table (the codes and bit widths the dtype rule accepts: spec/validation.md, see IMP-12).
#pragma once

#include <string>
#include <string_view>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"

namespace dlbridge {

/// The name of a dtype dlbridge accepts, as NumPy, PyTorch and ml_dtypes spell it: the code's
/// name followed by its bits ("int8", "uint64", "float32", "bfloat16", "complex128",
/// "opaque_handle64"); a name that already states its width alone ("float8_e4m3fn",
/// "float6_e2m3fn", "float4_e2m1fn"), and "bool" for (kDLBool, 8). More than one lane adds
/// "x<lanes>" ("float32x4"). ParseDtype reads every such name back to the same dtype.
///
/// Throws Error for a dtype the export and import rules refuse, with their message:
/// kUnsupportedDtype for an unknown code, kInvalidDtype for bits that do not match it or lanes 0.
DLBRIDGE_API std::string DtypeName(DLDataType dtype);

/// The dtype a name means: exactly the names DtypeName gives (lower case, no spaces), lanes 1
/// unless the name ends in "x<lanes>" (1..65535). Throws Error(kInvalidDtype) naming the
/// accepted names for anything else.
DLBRIDGE_API DLDataType ParseDtype(std::string_view name);

}  // namespace dlbridge
