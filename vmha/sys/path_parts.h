// Absolute paths as lists of components, for the confinement policy's
// lexical work (which root a path lies under, symlink expansion).
#pragma once
#include <string>
#include <vector>

namespace vmha {

// The components of a path, without empty ones ("//"); `.` and `..` kept.
inline std::vector<std::string> path_components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Components [from, end) joined by '/'; "." when there are none.
inline std::string join_components(const std::vector<std::string>& comps, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < comps.size(); ++i) out += (out.empty() ? "" : "/") + comps[i];
  return out.empty() ? "." : out;
}

// The absolute path of the components ("/" for none).
inline std::string absolute_path(const std::vector<std::string>& comps) {
  return comps.empty() ? "/" : "/" + join_components(comps);
}

}  // namespace vmha
