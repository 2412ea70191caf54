// What a protected task did (written by vmha-task as DIR/result from the
// primary's and the backup's RunStats, vmha/common/run_stats.h: a
// format=vmha-task-result/1 line, then strict key=value lines,
// vmha/common/key_value.h) and the job's total that goes into its AdminComment, e.g.
//   vmha: tasks=2 epochs=312 pause_ms_mean=0.41 failovers=1
// Fields: tasks (protected tasks finished), epochs (checkpoints committed),
// pause_ms_mean (mean time the guest was paused per epoch, over the primaries
// that finished), failovers (tasks finished by their backup), and, only when
// some did, unprotected (tasks that went on without a backup after losing it,
// vmha(1) --on-backup-loss continue).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace vmha_spank {

struct TaskResult {
  uint64_t epochs = 0;
  double pause_ms_mean = 0;
  uint64_t pause_count = 0;
  uint64_t failovers = 0;
  uint64_t unprotected = 0;  // 1: the primary lost its backup and went on without one
  std::string node, backup_node;
  int exit_code = 0;
  std::string takeover_cause;  // why vmha-task told the backup to take over (one line; empty: it did not)
};

std::string format_result(const TaskResult& r);
// `text` with every byte outside printable ASCII (and the backslash) as
// \xNN, at most `max` bytes: what a user wrote, fit for root's logs.
std::string printable(const std::string& text, size_t max);
// False with *error ("line N: ...") on a malformed file.
bool parse_result(const std::string& text, TaskResult* r, std::string* error);

struct JobTotals {
  uint64_t tasks = 0, epochs = 0, failovers = 0, pause_count = 0, unprotected = 0;
  double pause_ms_sum = 0;
  std::vector<std::string> takeovers;  // "TASKDIR: cause", one per task whose backup was told to take over
  void add(const TaskResult& r);
  std::string comment() const;  // the AdminComment text
};

// A result file is a few lines; anything larger is not vmha-task's.
constexpr std::size_t kMaxResultBytes = 64 * 1024;

// Sums */result under a job's state directory (opened as job_dir_fd; job_dir
// names it in messages). Unreadable, malformed, oversized or non-regular
// files are listed in *problems (one line each) and skipped.
JobTotals sum_job_results(int job_dir_fd, const std::string& job_dir, std::vector<std::string>* problems);

}  // namespace vmha_spank
