#include "plugins/spank/lib/ha_accounting.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <cstdint>

#include "plugins/spank/lib/state_dir.h"

namespace vmha_spank {

std::string format_result(const TaskResult& r) {
  char pause[64];
  std::snprintf(pause, sizeof pause, "%.4f", r.pause_ms_mean);
  std::ostringstream o;
  o << "epochs=" << r.epochs << "\npause_ms_mean=" << pause << "\npause_count=" << r.pause_count
    << "\nfailovers=" << r.failovers << "\nunprotected=" << r.unprotected << "\nnode=" << r.node << "\nbackup_node=" << r.backup_node
    << "\nexit=" << r.exit_code << "\n";
  if (!r.takeover_cause.empty()) {
    std::string cause = r.takeover_cause;
    for (char& c : cause)
      if (c == '\n' || c == '\r') c = ' ';
    o << "takeover_cause=" << cause << "\n";
  }
  return o.str();
}

namespace {

// Bounds a task can reach: an epoch every millisecond for thirty years, one
// takeover per task (one backup), an exit status, a pause of hours.
constexpr uint64_t kMaxEpochs = 1000000000000ull;
constexpr double kMaxPauseMs = 1e7;

// Digits only (no sign, exponent or space), at most `max`.
bool parse_count(const std::string& v, uint64_t max, uint64_t* out) {
  if (v.empty() || v.size() > 19) return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > max) return false;
  *out = n;
  return true;
}

// DIGITS[.DIGITS], at most `max`.
bool parse_decimal(const std::string& v, double max, double* out) {
  const size_t dot = v.find('.');
  const std::string whole = v.substr(0, dot), frac = dot == std::string::npos ? "" : v.substr(dot + 1);
  uint64_t w = 0, f = 0;
  if (!parse_count(whole, UINT64_MAX, &w) || (dot != std::string::npos && !parse_count(frac, UINT64_MAX, &f)))
    return false;
  const double d = std::strtod(v.c_str(), nullptr);
  if (!(d >= 0 && d <= max)) return false;
  *out = d;
  return true;
}

// A node name as Slurm allows them.
bool node_name(const std::string& v) {
  if (v.size() > 255) return false;
  for (char c : v)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) return false;
  return true;
}

}  // namespace

std::string printable(const std::string& text, size_t max) {
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max) break;
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    }
  }
  return out;
}

// The file is the job's user's: every value is checked strictly (counts in
// the ranges above, node names as Slurm's, text printable and escaped)
// before it reaches root's logs or the job's AdminComment.
bool parse_result(const std::string& text, TaskResult* r, std::string* error) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) {
      *error = "line " + std::to_string(n) + ": expected key=value, got '" + printable(line, 80) + "'";
      return false;
    }
    const std::string k = line.substr(0, eq), v = line.substr(eq + 1);
    std::string expected;
    uint64_t u = 0;
    if (k == "epochs") {
      if (!parse_count(v, kMaxEpochs, &r->epochs)) expected = "an integer 0.." + std::to_string(kMaxEpochs);
    } else if (k == "pause_count") {
      if (!parse_count(v, kMaxEpochs, &r->pause_count)) expected = "an integer 0.." + std::to_string(kMaxEpochs);
    } else if (k == "failovers") {
      if (!parse_count(v, 1, &r->failovers)) expected = "0 or 1 (one backup per task)";
    } else if (k == "unprotected") {
      if (!parse_count(v, 1, &r->unprotected)) expected = "0 or 1";
    } else if (k == "pause_ms_mean") {
      if (!parse_decimal(v, kMaxPauseMs, &r->pause_ms_mean)) expected = "a decimal 0..10000000";
    } else if (k == "exit") {
      if (!parse_count(v, 255, &u))
        expected = "an exit status 0..255";
      else
        r->exit_code = static_cast<int>(u);
    } else if (k == "node" || k == "backup_node") {
      if (!node_name(v))
        expected = "a node name (letters, digits, '.', '-', '_')";
      else
        (k == "node" ? r->node : r->backup_node) = v;
    } else if (k == "takeover_cause") {
      r->takeover_cause = printable(v, 200);
    }
    // other keys: written by newer versions, ignored
    if (!expected.empty()) {
      *error = "line " + std::to_string(n) + ": " + printable(k, 40) + ": expected " + expected + ", got '" +
               printable(v, 40) + "'";
      return false;
    }
  }
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
    if (!read_small_file_at(task.get(), "result", kMaxResultBytes, &text, &error)) {
      if (error != std::strerror(ENOENT)) problems->push_back(job_dir + "/" + printable(n, 100) + "/result: " + error);
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
