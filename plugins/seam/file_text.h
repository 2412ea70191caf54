// How the plugins name files and their permissions in messages. Header-only:
// the SPANK plugin's state directory checks (plugins/spank/lib) use it too
// without linking the seam.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>

namespace duet::plugin {

// The permission bits as chmod takes them: "0644", "1777".
inline std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The directory part of a path: "." for a bare name, "/" for "/name".
inline std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace duet::plugin
