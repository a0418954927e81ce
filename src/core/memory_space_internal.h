// The memory space names as text for messages (src/core/memory_space.cpp).
#pragma once

#include <string>

#include "dlbridge/memory_space.h"

namespace dlbridge {
namespace detail {

/// The names of the spaces `keep` accepts (every space when null), quoted and in table order:
/// "\"host\", \"cuda\", \"hip\", \"level_zero\"". For "accepted: ..." messages.
std::string SpaceNameList(bool (*keep)(MemorySpace space) = nullptr);

/// Throws Error(kInvalidMemorySpace, "<where>: ...") when `space` is not one of the
/// enum's values (an integer cast to MemorySpace), naming the accepted values (see MD-15).
void CheckMemorySpace(const char* where, MemorySpace space);

}  // namespace detail
}  // namespace dlbridge
