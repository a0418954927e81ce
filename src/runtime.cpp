// Helpers the runtime backends share: choosing and opening their library.
#include "runtime.h"

#include <dlfcn.h>

#include <cstdlib>

namespace dlbridge {
namespace detail {

std::string LibraryOverride(bool has_override, const std::string& override_path,
                            const char* env_name) {
  if (has_override) return override_path;
  const char* env = std::getenv(env_name);
  return env != nullptr ? std::string(env) : std::string();
}

void* OpenFirst(const std::vector<std::string>& names, std::string* loaded, std::string* errors) {
  for (const std::string& name : names) {
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      *loaded = name;
      return handle;
    }
    const char* why = dlerror();
    if (!errors->empty()) errors->append("; ");
    errors->append(why != nullptr ? why : name + ": cannot be loaded");
  }
  return nullptr;
}

void* Symbol(void* handle, const char* name) { return dlsym(handle, name); }

}  // namespace detail
}  // namespace dlbridge
