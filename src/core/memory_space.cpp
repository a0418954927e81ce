// The memory space names (include/dlbridge/memory_space.h), both ways. Knows nothing of
// DLPack: how spaces map to device types is src/devices/device_map.cpp's.
#include "dlbridge/memory_space.h"

#include <cstring>
#include <string>

#include "core/error_internal.h"
#include "core/memory_space_internal.h"

namespace dlbridge {
namespace {

struct SpaceName {
  MemorySpace space;
  const char* name;
};

constexpr SpaceName kSpaceNames[] = {
    {MemorySpace::kHost, "host"},
    {MemorySpace::kCuda, "cuda"},
    {MemorySpace::kHip, "hip"},
    {MemorySpace::kLevelZero, "level_zero"},
};

}  // namespace

namespace detail {

std::string SpaceNameList(bool (*keep)(MemorySpace space)) {
  std::string list;
  for (const SpaceName& row : kSpaceNames) {
    if (keep != nullptr && !keep(row.space)) continue;
    if (!list.empty()) list += ", ";
    list += std::string("\"") + row.name + "\"";
  }
  return list;
}

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void FailSpaceValue(const char* where, MemorySpace space) {
  std::string accepted;
  for (const SpaceName& row : kSpaceNames) {
    if (!accepted.empty()) accepted += ", ";
    accepted += std::to_string(static_cast<int>(row.space)) + " (\"" + row.name + "\")";
  }
  Fail(ErrorCode::kInvalidMemorySpace, std::string(where) + ": memory space value " +
                                           std::to_string(static_cast<int>(space)) +
                                           " is not a MemorySpace; accepted: " + accepted +
                                           " (cast only these, or set the space by name)");
}

}  // namespace

void CheckMemorySpace(const char* where, MemorySpace space) {
  // MD-15: an integer cast to MemorySpace would otherwise read as "unknown" and export as
  // kDLCPU (DefaultDeviceType's fallback): host memory it may not be.
  for (const SpaceName& row : kSpaceNames) {
    if (row.space == space) return;
  }
  FailSpaceValue(where, space);
}

}  // namespace detail

const char* MemorySpaceName(MemorySpace space) noexcept {
  for (const SpaceName& row : kSpaceNames) {
    if (row.space == space) return row.name;
  }
  return "unknown";
}

namespace {

// Why `name` is not a space name (null, "metal", or unknown). Out of line and cold, so that
// parsing a valid name pays nothing for the messages.
[[noreturn, gnu::cold, gnu::noinline]] void FailSpaceName(const char* name) {
  if (name == nullptr) {
    detail::Fail(ErrorCode::kInvalidMemorySpace,
                 "memory space is null; accepted: " + detail::SpaceNameList());
  }
  if (std::strcmp(name, "metal") == 0) {  // MD-4: "metal" gets its own message
    detail::Fail(ErrorCode::kInvalidMemorySpace,
                 "memory space \"metal\" does not exist: describe shared-storage Metal memory "
                 "as \"host\" (it is unified memory); private-storage Metal memory has no "
                 "host-readable pointer and cannot be described");
  }
  // MD-3: an unknown name is refused, listing the accepted ones.
  detail::Fail(ErrorCode::kInvalidMemorySpace,
               std::string("memory space \"") + name +
                   "\" is unknown; accepted: " + detail::SpaceNameList());
}

}  // namespace

MemorySpace ParseMemorySpace(const char* name) {
  if (name != nullptr) {
    for (const SpaceName& row : kSpaceNames) {
      if (std::strcmp(row.name, name) == 0) return row.space;
    }
  }
  FailSpaceName(name);
}

}  // namespace dlbridge
