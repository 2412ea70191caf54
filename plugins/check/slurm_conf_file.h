// slurm.conf as `duet check-config` reads it: enough to see the lines duet
// needs (PriorityType, SelectType, ...), not Slurm's whole grammar. One
// `Key=Value` starts a line (keys case-insensitive; the rest of the line, as
// on NodeName lines, is not read); `#` starts a comment; `Include PATH`
// (relative to slurm.conf's directory, glob patterns allowed) reads more.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace duet::plugin {

struct SlurmConfSetting {
  std::string file;
  int line = 0;
  std::string value;
};

struct SlurmConfFile {
  std::string path;
  std::map<std::string, SlurmConfSetting> settings;  // lower-case key -> last setting
  // Returns the key's last setting, or nullptr when no line sets it.
  const SlurmConfSetting* find(std::string_view key) const;
};

// Reads `path` and the files it includes. Returns false and sets *error
// ("FILE: why", or "FILE:LINE: why" for an include that fails) when a file
// cannot be read.
bool read_slurm_conf(const std::string& path, SlurmConfFile* out, std::string* error);

}  // namespace duet::plugin
