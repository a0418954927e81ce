/// @file
/// Dtypes: the DLDataType of a C++ element type (DataTypeOf), the comparison of two
/// (SameDataType), and a DLDataType as text and back, both directions from the core's one
/// dtype table (the codes and bit widths the dtype rule accepts: spec/validation.md, see IMP-12).
#pragma once

#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "dlbridge/dlpack_header.h"
#include "dlbridge/export.h"

namespace dlbridge {
namespace detail {
// False for every T, but only once T is known: a static_assert on it fires when (and only
// when) DataTypeOf<T> is instantiated, and the compiler's note names T.
template <class T>
inline constexpr bool kNoDataTypeFor = false;

template <class U>
constexpr DLDataType MakeDataType(uint8_t code) noexcept {
  DLDataType dtype{};
  dtype.code = code;
  dtype.bits = static_cast<uint8_t>(sizeof(U) * 8);
  dtype.lanes = 1;
  return dtype;
}
}  // namespace detail

/// The DLDataType of the C++ element type `T` (const and volatile ignored), lanes 1:
///  - bool: (kDLBool, 8); the integer types by signedness and size: int8..int64, uint8..uint64
///    (signed char int8, unsigned char uint8, plain char int8 or uint8 as it is signed or not
///    on the platform);
///  - float: (kDLFloat, 32), double: (kDLFloat, 64); std::complex<float>: (kDLComplex, 64),
///    std::complex<double>: (kDLComplex, 128).
///
/// Any other type fails to compile with a static_assert whose note names `T`: long double (no
/// DLPack float width means the x87 80-bit or the binary128 format; convert to double),
/// wchar_t/char16_t/char32_t (text, not numbers: use the integer type of their width),
/// integers wider than 64 bits, enums (use their underlying type), class types.
// HLP-1: every arithmetic type DLPack can name; a compile error naming T otherwise.
template <class T>
constexpr DLDataType DataTypeOf() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    static_assert(sizeof(bool) == 1, "dlbridge::DataTypeOf<bool>: DLPack's bool is one byte");
    return detail::MakeDataType<U>(static_cast<uint8_t>(kDLBool));
  } else if constexpr (std::is_same_v<U, wchar_t> || std::is_same_v<U, char16_t> ||
                       std::is_same_v<U, char32_t>) {
    static_assert(detail::kNoDataTypeFor<T>,
                  "dlbridge::DataTypeOf<T>: T is a character type (text, not numbers) and has "
                  "no DLPack dtype; use the integer type of its width (uint16_t, uint32_t)");
    return {};
  } else if constexpr (std::is_integral_v<U> && sizeof(U) <= 8) {
    return detail::MakeDataType<U>(static_cast<uint8_t>(std::is_signed_v<U> ? kDLInt : kDLUInt));
  } else if constexpr (std::is_same_v<U, float> || std::is_same_v<U, double>) {
    static_assert(std::numeric_limits<U>::is_iec559,
                  "dlbridge::DataTypeOf<T>: DLPack's kDLFloat is IEEE 754; this T is not");
    return detail::MakeDataType<U>(static_cast<uint8_t>(kDLFloat));
  } else if constexpr (std::is_same_v<U, std::complex<float>> ||
                       std::is_same_v<U, std::complex<double>>) {
    return detail::MakeDataType<U>(static_cast<uint8_t>(kDLComplex));
  } else {
    // HLP-10: any other type stops the build; the compiler's note names T.
    static_assert(detail::kNoDataTypeFor<T>,
                  "dlbridge::DataTypeOf<T>: T has no DLPack dtype; accepted: bool, the integer "
                  "types up to 64 bits, float, double, std::complex<float>, "
                  "std::complex<double> (long double: convert to double; an enum: use its "
                  "underlying type)");
    return {};
  }
}

/// Whether two dtypes are the same: code, bits and lanes all equal. dlbridge defines no
/// operator== on the global DLDataType (a user's or another library's would collide with it).
// HLP-2: equal code, bits and lanes.
constexpr bool SameDataType(DLDataType a, DLDataType b) noexcept {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

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
