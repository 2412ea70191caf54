// duet.conf: the plugins' configuration (man duet.conf(5)), read without Slurm.
//
// Slurm's habits: one `Key=Value` per line, keys case-insensitive, `#` at the
// start of a line or after a space or tab starts a comment (so a path may
// hold a '#'), blank lines ignored. Unknown keys and bad values (a NUL or
// other control byte, an integer that is not plain decimal) are reported
// with file, line and column; the key keeps its default and parsing goes on,
// so one typo never stops slurmctld.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
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
  // Preemption by a preemptive model (man duet.conf(5), PREEMPTION)
  std::string preemption = "off";     // off | requeue
  int preempt_min_run_time_s = 600;   // a run this short is never preempted, 0..604800
  int preempt_job_interval_s = 3600;  // at most one requeue per job per this, 0..604800
  int preempt_max_restarts = 3;       // a job requeued this often is kept, 1..1000
  int preempt_max_per_rescore = 4;    // requeues per re-score at most, 1..1000
  // select/duet
  std::string ranker = "model";         // model | prefer-fast | none
  std::string placement_model_path;     // "" = <conf dir>/duet-placement.model
  std::string node_speeds_file;         // CSV with columns node,...,speed
  std::string job_type_speeds_file;     // Gavel's throughput table (JSON); "" = none
  std::string observer = "node-stats";  // node-stats | none
  // both
  bool explain = true;  // write SystemComment "duet: ..."
  LogLevel log_level = LogLevel::kInfo;
  // Not a key: set by load_duet_conf's caller (the plugins: SlurmUser's uid).
  // When set, the model, node speeds and job type speeds files must pass the trust check of
  // file_trust.h or are refused (the plugins then fall back).
  std::optional<std::uint32_t> trusted_uid;
};

// The largest duet.conf read (1 MiB).
inline constexpr std::uint64_t kMaxDuetConfBytes = std::uint64_t{1} << 20;

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
  // The line each key given was last set on, by its name as duet.conf(5)
  // spells it ("ModelPath"); for messages about what a key names.
  std::map<std::string, int> key_lines;
  bool file_found = false;
  std::string path;
};

// Parses `text` as if read from `file` (relative paths in it are made
// absolute against the directory of `file`).
ConfResult parse_duet_conf(std::string_view text, const std::string& file);

// Reads and parses `path`. A missing file is not an error (defaults apply,
// file_found = false); an unreadable one is, and so is one that is not a
// regular file of at most kMaxDuetConfBytes. With `trusted_uid` (SlurmUser),
// a file others could change (file_trust.h) is refused: one error, all
// defaults, and conf.trusted_uid is set for the files the conf names.
ConfResult load_duet_conf(const std::string& path, std::optional<std::uint32_t> trusted_uid = std::nullopt);

// duet.conf next to the given slurm.conf.
std::string duet_conf_path_for(const std::string& slurm_conf_path);

std::string to_string(LogLevel level);

}  // namespace duet::plugin
