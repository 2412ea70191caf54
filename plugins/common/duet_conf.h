// duet.conf: the plugins' configuration (man duet.conf(5)), read without Slurm.
//
// Slurm's habits: one `Key=Value` per line, keys case-insensitive, `#` starts a
// comment, blank lines ignored. Unknown keys and bad values are reported with
// file, line and column; the key keeps its default and parsing goes on, so
// one typo never stops slurmctld.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace duet::plugin {

enum class LogLevel { kQuiet, kInfo, kVerbose, kDebug };

struct DuetConf {
  // priority/duet
  std::string scorer = "model";        // model | small-first | fallback
  std::string model_path;              // "" = <conf dir>/duet-ordering.model
  int rescore_interval_s = 5;          // 1..3600
  double fallback_age_weight = 1000;   // >= 0
  double fallback_size_weight = 1000;  // >= 0
  int fallback_max_age_s = 7 * 86400;  // age factor saturates here, >= 1
  // select/duet
  std::string ranker = "model";        // model | prefer-fast | none
  std::string placement_model_path;    // "" = <conf dir>/duet-placement.model
  std::string node_speeds_file;        // CSV with columns node,...,speed
  std::string observer = "node-stats"; // node-stats | none
  // both
  bool explain = true;                 // write SystemComment "duet: ..."
  LogLevel log_level = LogLevel::kInfo;
};

struct ConfError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string message;
  std::string text() const;  // "file:line:column: message"
};

struct ConfResult {
  DuetConf conf;
  std::vector<ConfError> errors;
  bool file_found = false;
  std::string path;
};

// Parses `text` as if read from `file` (relative paths in it are made
// absolute against the directory of `file`).
ConfResult parse_duet_conf(std::string_view text, const std::string& file);

// Reads and parses `path`. A missing file is not an error (defaults apply,
// file_found = false); an unreadable one is.
ConfResult load_duet_conf(const std::string& path);

// duet.conf next to the given slurm.conf.
std::string duet_conf_path_for(const std::string& slurm_conf_path);

std::string to_string(LogLevel level);

}  // namespace duet::plugin
