// The memory space names (include/dlbridge/memory_space.h), both ways. Knows nothing of
// DLPack: how spaces map to device types is src/device_map.cpp's.
#include "dlbridge/memory_space.h"

#include <cstring>
#include <string>

#include "error_internal.h"
#include "memory_space_internal.h"

namespace dlbridge {
namespace {

// Indexed by MemorySpace.
constexpr const char* kSpaceNames[] = {"host", "cuda", "hip", "level_zero"};
constexpr int kSpaceCount = static_cast<int>(sizeof(kSpaceNames) / sizeof(kSpaceNames[0]));
static_assert(static_cast<int>(MemorySpace::kHost) == 0 &&
                  static_cast<int>(MemorySpace::kLevelZero) == kSpaceCount - 1,
              "kSpaceNames is indexed by MemorySpace");

}  // namespace

namespace detail {

std::string SpaceNameList(bool (*keep)(MemorySpace space)) {
  std::string list;
  for (int i = 0; i < kSpaceCount; ++i) {
    if (keep != nullptr && !keep(static_cast<MemorySpace>(i))) continue;
    if (!list.empty()) list += ", ";
    list += std::string("\"") + kSpaceNames[i] + "\"";
  }
  return list;
}

}  // namespace detail

const char* MemorySpaceName(MemorySpace space) noexcept {
  const int i = static_cast<int>(space);
  return i >= 0 && i < kSpaceCount ? kSpaceNames[i] : "unknown";
}

MemorySpace ParseMemorySpace(const char* name) {
  if (name == nullptr) {
    detail::Fail(ErrorCode::kInvalidMemorySpace,
                 "memory space is null; accepted: " + detail::SpaceNameList());
  }
  for (int i = 0; i < kSpaceCount; ++i) {
    if (std::strcmp(kSpaceNames[i], name) == 0) return static_cast<MemorySpace>(i);
  }
  if (std::strcmp(name, "metal") == 0) {
    detail::Fail(ErrorCode::kInvalidMemorySpace,
                 "memory space \"metal\" does not exist: describe shared-storage Metal memory "
                 "as \"host\" (it is unified memory); private-storage Metal memory has no "
                 "host-readable pointer and cannot be described");
  }
  detail::Fail(ErrorCode::kInvalidMemorySpace, std::string("memory space \"") + name +
                                                   "\" is unknown; accepted: " +
                                                   detail::SpaceNameList());
}

}  // namespace dlbridge
