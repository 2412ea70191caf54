// A small slurm.conf reader: the first Key=Value of each line, and Include.
#include "plugins/check/slurm_conf_file.h"

#include <glob.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "plugins/seam/file_text.h"
#include "policy/util/printable.h"
#include "policy/util/text.h"

namespace duet::plugin {
namespace {

constexpr int kMaxIncludeDepth = 8;  // as deep as any real site nests

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == s.npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

// The files an Include names: a glob pattern, relative to slurm.conf's directory.
std::vector<std::string> include_targets(const std::string& pattern, const std::string& base_dir) {
  std::string full = pattern[0] == '/' ? pattern : base_dir + "/" + pattern;
  glob_t g{};
  std::vector<std::string> files;
  if (glob(full.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i) files.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  if (files.empty()) files.push_back(full);  // read it, so a missing file says so
  return files;
}

bool read_file(const std::string& path, const std::string& base_dir, int depth, SlurmConfFile* out,
               std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = printable(path) + ": cannot read: " + std::strerror(errno);
    return false;
  }
  int lineno = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++lineno;
    std::string line = trim(std::string_view(raw).substr(0, raw.find('#')));
    if (line.empty()) continue;
    if (line.size() > 8 && iequal(line.substr(0, 7), "include") && (line[7] == ' ' || line[7] == '\t')) {
      if (depth >= kMaxIncludeDepth) {
        *error = printable(path) + ":" + std::to_string(lineno) + ": includes nested too deep";
        return false;
      }
      for (const std::string& f : include_targets(trim(line.substr(8)), base_dir))
        if (!read_file(f, base_dir, depth + 1, out, error)) {
          *error = printable(path) + ":" + std::to_string(lineno) + ": Include: " + *error;
          return false;
        }
      continue;
    }
    size_t eq = line.find('=');
    if (eq == line.npos) continue;
    std::string value = trim(line.substr(eq + 1));
    value = value.substr(0, value.find_first_of(" \t"));
    out->settings[lower(trim(line.substr(0, eq)))] = {path, lineno, value};
  }
  return true;
}

}  // namespace

const SlurmConfSetting* SlurmConfFile::find(std::string_view key) const {
  auto it = settings.find(lower(std::string(key)));
  return it == settings.end() ? nullptr : &it->second;
}

bool read_slurm_conf(const std::string& path, SlurmConfFile* out, std::string* error) {
  out->path = path;
  out->settings.clear();
  return read_file(path, dir_of(path), 0, out, error);
}

}  // namespace duet::plugin
