// The one error funnel: every Error dlbridge throws for bad input is thrown here.
#pragma once

#include <string>

#include "dlbridge/error.h"

namespace dlbridge {
namespace detail {

/// Throws Error(code, message). Every throw of dlbridge's own goes through this one function.
[[noreturn]] void Fail(ErrorCode code, const std::string& message);
/// Throws Error(code, reason, advice, advice_detail): a message ending with its advice.
[[noreturn]] void Fail(ErrorCode code, const std::string& reason, ErrorAdvice advice,
                       const std::string& advice_detail = std::string());

}  // namespace detail
}  // namespace dlbridge
