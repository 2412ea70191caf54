#include "plugins/spank/lib/ha_accounting.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <type_traits>

#include "plugins/spank/lib/state_dir.h"

namespace vmha_spank {

std::string format_result(const TaskResult& r) {
  char pause[64];
  std::snprintf(pause, sizeof pause, "%.4f", r.pause_ms_mean);
  std::ostringstream o;
  o << "epochs=" << r.epochs << "\npause_ms_mean=" << pause << "\npause_count=" << r.pause_count
    << "\nfailovers=" << r.failovers << "\nnode=" << r.node << "\nbackup_node=" << r.backup_node
    << "\nexit=" << r.exit_code << "\n";
  if (!r.takeover_cause.empty()) {
    std::string cause = r.takeover_cause;
    for (char& c : cause)
      if (c == '\n' || c == '\r') c = ' ';
    o << "takeover_cause=" << cause << "\n";
  }
  return o.str();
}

bool parse_result(const std::string& text, TaskResult* r, std::string* error) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) {
      *error = "line " + std::to_string(n) + ": expected key=value, got '" + line + "'";
      return false;
    }
    std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    char* end = nullptr;
    auto number = [&](auto* field) {
      errno = 0;
      double d = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || d < 0) return false;
      *field = static_cast<std::remove_reference_t<decltype(*field)>>(d);
      return true;
    };
    bool ok = true;
    if (k == "epochs")
      ok = number(&r->epochs);
    else if (k == "pause_ms_mean")
      ok = number(&r->pause_ms_mean);
    else if (k == "pause_count")
      ok = number(&r->pause_count);
    else if (k == "failovers")
      ok = number(&r->failovers);
    else if (k == "node")
      r->node = v;
    else if (k == "backup_node")
      r->backup_node = v;
    else if (k == "exit")
      r->exit_code = std::atoi(v.c_str());
    else if (k == "takeover_cause")
      r->takeover_cause = v.substr(0, 200);
    // other keys: written by newer versions, ignored
    if (!ok) {
      *error = "line " + std::to_string(n) + ": " + k + ": expected a non-negative number, got '" + v + "'";
      return false;
    }
  }
  return true;
}

void JobTotals::add(const TaskResult& r) {
  ++tasks;
  epochs += r.epochs;
  failovers += r.failovers;
  pause_count += r.pause_count;
  pause_ms_sum += r.pause_ms_mean * static_cast<double>(r.pause_count);
}

std::string JobTotals::comment() const {
  char buf[200];
  double mean = pause_count ? pause_ms_sum / static_cast<double>(pause_count) : 0.0;
  std::snprintf(buf, sizeof buf, "vmha: tasks=%llu epochs=%llu pause_ms_mean=%.3f failovers=%llu",
                static_cast<unsigned long long>(tasks), static_cast<unsigned long long>(epochs), mean,
                static_cast<unsigned long long>(failovers));
  return buf;
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
    if (!read_small_file_at(task.get(), "result", kMaxResultBytes, &text, &error)) {
      if (error != std::strerror(ENOENT)) problems->push_back(job_dir + "/" + n + "/result: " + error);
      continue;
    }
    TaskResult r;
    if (!parse_result(text, &r, &error)) {
      problems->push_back(job_dir + "/" + n + "/result: " + error);
      continue;
    }
    t.add(r);
    if (!r.takeover_cause.empty()) t.takeovers.push_back(n + ": " + r.takeover_cause);
  }
  return t;
}

}  // namespace vmha_spank
