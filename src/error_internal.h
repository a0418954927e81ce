// The one error funnel: every Error dlbridge throws for bad input is thrown here.
#pragma once

#include <string>

#include "dlbridge/error.h"

namespace dlbridge {
namespace detail {

/// Throws Error(code, message). Every throw of dlbridge's own goes through this one function.
[[noreturn]] void Fail(ErrorCode code, const std::string& message);

}  // namespace detail
}  // namespace dlbridge
