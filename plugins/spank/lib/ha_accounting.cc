#include "plugins/spank/lib/ha_accounting.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdint>

#include "plugins/spank/lib/state_dir.h"
#include "vmha/common/key_value.h"
#include "vmha/common/run_stats.h"

namespace vmha_spank {

namespace {

constexpr std::string_view kFormat = "vmha-task-result/1";
constexpr size_t kMaxCause = 200;

}  // namespace

std::string format_result(const TaskResult& r) {
  vmha::KeyValueWriter w;
  w.text("format", kFormat).count("epochs", r.epochs).decimal("pause_ms_mean", r.pause_ms_mean);
  w.count("pause_count", r.pause_count).count("failovers", r.failovers).count("unprotected", r.unprotected);
  w.text("node", r.node).text("backup_node", r.backup_node).count("exit", static_cast<uint64_t>(r.exit_code));
  if (!r.takeover_cause.empty()) w.text("takeover_cause", r.takeover_cause, kMaxCause);  // one line, escaped
  return w.str();
}

std::string printable(const std::string& text, size_t max) { return vmha::printable(text, max); }

// The file is the job's user's: every value is checked strictly (counts in
// RunStats' bounds, one takeover per task, node names as Slurm's, text
// escaped), each key once, no key but these, before anything reaches root's
// logs or the job's AdminComment.
bool parse_result(const std::string& text, TaskResult* r, std::string* error) {
  vmha::Result<vmha::KeyValues> parsed = vmha::KeyValues::parse(text);
  if (!parsed.ok()) return *error = parsed.status().message(), false;
  vmha::KeyValues& kv = parsed.value();
  TaskResult got;
  uint64_t exit_code = 0;
  for (const vmha::Status& s :
       {kv.count("epochs", vmha::kMaxStatsEpochs, &got.epochs),
        kv.decimal("pause_ms_mean", vmha::kMaxStatsPauseMs, &got.pause_ms_mean),
        kv.count("pause_count", vmha::kMaxStatsEpochs, &got.pause_count), kv.count("failovers", 1, &got.failovers),
        kv.count("unprotected", 1, &got.unprotected), kv.count("exit", 255, &exit_code),
        kv.word("node", 255, &got.node), kv.word("backup_node", 255, &got.backup_node),
        kv.text("takeover_cause", kMaxCause, &got.takeover_cause), kv.format(kFormat), kv.no_others()})
    if (!s.ok()) return *error = s.message(), false;
  got.exit_code = static_cast<int>(exit_code);
  *r = got;
  return true;
}

void JobTotals::add(const TaskResult& r) {
  ++tasks;
  epochs += r.epochs;
  failovers += r.failovers;
  unprotected += r.unprotected;
  pause_count += r.pause_count;
  pause_ms_sum += r.pause_ms_mean * static_cast<double>(r.pause_count);
}

std::string JobTotals::comment() const {
  char buf[200];
  double mean = pause_count ? pause_ms_sum / static_cast<double>(pause_count) : 0.0;
  std::snprintf(buf, sizeof buf, "vmha: tasks=%llu epochs=%llu pause_ms_mean=%.3f failovers=%llu",
                static_cast<unsigned long long>(tasks), static_cast<unsigned long long>(epochs), mean,
                static_cast<unsigned long long>(failovers));
  std::string out = buf;
  if (unprotected) out += " unprotected=" + std::to_string(unprotected);  // worth an admin's look
  return out;
}

JobTotals sum_job_results(int job_dir_fd, const std::string& job_dir, std::vector<std::string>* problems) {
  JobTotals t;
  int copy = ::dup(job_dir_fd);
  DIR* d = copy >= 0 ? ::fdopendir(copy) : nullptr;
  if (!d) {
    if (copy >= 0) ::close(copy);
    problems->push_back(job_dir + ": " + std::strerror(errno));
    return t;
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    // The tree is the user's: a symlink, FIFO or huge file is skipped, never followed or waited on.
    Fd task(::openat(job_dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!task) continue;
    std::string text, error;
    if (vmha::Status s = vmha::read_small_file(task.get(), "result", kMaxResultBytes, &text); !s.ok()) {
      if (!vmha::missing(s)) problems->push_back(job_dir + "/" + printable(n, 100) + "/result: " + s.message());
      continue;
    }
    TaskResult r;
    if (!parse_result(text, &r, &error)) {
      problems->push_back(job_dir + "/" + printable(n, 100) + "/result: " + error);
      continue;
    }
    t.add(r);
    if (!r.takeover_cause.empty()) t.takeovers.push_back(printable(n, 100) + ": " + r.takeover_cause);
  }
  return t;
}

}  // namespace vmha_spank
