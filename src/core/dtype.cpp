// Dtype names both ways (include/dlbridge/dtype.h), over the rules' dtype table
// (src/dlpack/dlpack_rules.h: DtypeCodeName, DtypeCodeCount, DtypeBitsValid).
#include "dlbridge/dtype.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/error_internal.h"
#include "dlpack/dlpack_rules.h"

namespace dlbridge {
namespace {

// Names that state their width (float8_e4m3fn) and "bool" are spelled without their bits.
bool SpelledAlone(const char* codeName) noexcept {
  return std::strpbrk(codeName, "0123456789") != nullptr || std::strcmp(codeName, "bool") == 0;
}

// The one width of a code spelled alone.
uint8_t OnlyWidth(uint8_t code) noexcept {
  for (int bits = 1; bits < 256; ++bits) {
    if (detail::DtypeBitsValid(code, static_cast<uint8_t>(bits))) return static_cast<uint8_t>(bits);
  }
  return 0;
}

// Digits only, as a number no larger than `max`; false otherwise.
bool ParseNumber(std::string_view text, uint32_t max, uint32_t* out) noexcept {
  if (text.empty() || text.size() > 5 || (text.size() > 1 && text[0] == '0')) return false;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value > max) return false;
  *out = value;
  return true;
}

// A name without a lanes suffix: "<code name><bits>", or a code name spelled alone.
bool ParseBase(std::string_view name, DLDataType* out) noexcept {
  for (int i = 0; i < detail::DtypeCodeCount(); ++i) {
    const auto code = static_cast<uint8_t>(i);
    const char* codeName = detail::DtypeCodeName(code);
    const std::string_view prefix(codeName);
    if (name.substr(0, prefix.size()) != prefix) continue;
    if (SpelledAlone(codeName)) {
      if (name.size() != prefix.size()) continue;
      *out = DLDataType{code, OnlyWidth(code), 1};
      return true;
    }
    uint32_t bits = 0;
    if (ParseNumber(name.substr(prefix.size()), 255, &bits) &&
        detail::DtypeBitsValid(code, static_cast<uint8_t>(bits))) {
      *out = DLDataType{code, static_cast<uint8_t>(bits), 1};
      return true;
    }
  }
  return false;
}

std::string BaseName(uint8_t code, uint8_t bits) {
  const char* codeName = detail::DtypeCodeName(code);
  return SpelledAlone(codeName) ? std::string(codeName) : codeName + std::to_string(bits);
}

// Every name with one lane, in table order: the accepted values of ParseDtype's message.
std::string AcceptedNames() {
  std::string names;
  for (int i = 0; i < detail::DtypeCodeCount(); ++i) {
    const auto code = static_cast<uint8_t>(i);
    for (int bits = 1; bits < 256; ++bits) {
      if (!detail::DtypeBitsValid(code, static_cast<uint8_t>(bits))) continue;
      if (!names.empty()) names += ", ";
      names += BaseName(code, static_cast<uint8_t>(bits));
    }
  }
  return names;
}

}  // namespace

// DT-1: the code's name and bits, or the name alone; x<lanes>.
std::string DtypeName(DLDataType dtype) {
  detail::CheckDtypeOrThrow("DtypeName", dtype);  // the dtype rule and its message (see IMP-12)
  std::string name = BaseName(dtype.code, dtype.bits);
  if (dtype.lanes != 1) name += "x" + std::to_string(dtype.lanes);
  return name;
}

// DT-2: exactly the names DtypeName gives.
DLDataType ParseDtype(std::string_view name) {
  DLDataType dtype{};
  if (ParseBase(name, &dtype)) return dtype;
  const size_t x = name.rfind('x');
  uint32_t lanes = 0;
  if (x != std::string_view::npos && ParseNumber(name.substr(x + 1), 65535, &lanes) && lanes >= 1 &&
      ParseBase(name.substr(0, x), &dtype)) {
    dtype.lanes = static_cast<uint16_t>(lanes);
    return dtype;
  }
  detail::Fail(ErrorCode::kInvalidDtype, "ParseDtype: dtype '" + std::string(name) +
                                             "' is unknown; accepted: " + AcceptedNames() +
                                             ", each optionally followed by x<lanes> (float32x4)");
}

}  // namespace dlbridge
