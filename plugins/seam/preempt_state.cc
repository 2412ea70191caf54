#include "plugins/seam/preempt_state.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "policy/util/printable.h"

namespace duet::plugin {
namespace {

// A run or GPU-second total beyond this (31,000 years of 1,000 GPUs) is not
// a real job's: the file is damaged.
constexpr double kMaxSeconds = 1e15;
constexpr uint32_t kMaxPreemptions = 1000000;

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == ' ') {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

template <class T>
bool parse_uint(std::string_view s, T* v) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;  // no sign, no blank
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_seconds(std::string_view s, double* v) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(*v) && *v >= 0 && *v <= kMaxSeconds;
}

// A line quoted in a message: bounded, terminal-safe.
std::string quoted(std::string_view line) {
  constexpr size_t kShown = 40;
  return "'" + printable(line.substr(0, kShown)) + (line.size() > kShown ? "...'" : "'");
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", s);
  return buf;
}

// The run started at `start_time` is the one last counted in `e`. A start
// time of 0 (not known: a version 1 file) matches no run.
bool already_counted(const EarlierService& e, int64_t start_time) {
  return e.last_start != 0 && e.last_start == start_time;
}

}  // namespace

std::string encode_preempt_state(const EarlierServices& jobs) {
  std::string out = std::string(kPreemptStateMagic) + " " + std::to_string(kPreemptStateVersion) + " " +
                    std::to_string(jobs.size()) + "\n";
  for (const auto& [id, e] : jobs) {
    char buf[128];  // %.17g: a double reads back exactly
    std::snprintf(buf, sizeof buf, "%u %.17g %.17g %u %lld\n", id, e.run_s, e.attained_gpu_s, e.preemptions,
                  static_cast<long long>(e.last_start));
    out += buf;
  }
  return out;
}

bool decode_preempt_state(std::string_view text, EarlierServices* jobs, std::string* error) {
  auto bad = [error](std::string why) {
    *error = std::move(why);
    return false;
  };
  if (text.empty()) return bad("empty");
  if (text.size() > kPreemptStateMaxBytes)
    return bad(std::to_string(text.size()) + " bytes, more than " + std::to_string(kPreemptStateMaxBytes));
  if (text.back() != '\n') return bad("truncated: the last line has no newline");
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  const std::vector<std::string_view> head = split(lines[0]);
  if (head[0] != kPreemptStateMagic)
    return bad("not a " + std::string(kPreemptStateMagic) + " file (first line " + quoted(lines[0]) + ")");
  int version = 0;
  if (head.size() < 2 || !parse_uint(head[1], &version))
    return bad("line 1: expected '" + std::string(kPreemptStateMagic) + " VERSION JOBS', got " + quoted(lines[0]));
  if (version < 1 || version > kPreemptStateVersion)
    return bad("format version " + std::to_string(version) + ", this build reads versions 1 to " +
               std::to_string(kPreemptStateVersion));
  // version 1 has no LAST_START: its runs' start times are not known (0)
  const size_t fields = version == 1 ? 4 : 5;
  const char* const expected = version == 1 ? "expected 'JOBID RUN_S GPU_S PREEMPTIONS', got "
                                            : "expected 'JOBID RUN_S GPU_S PREEMPTIONS LAST_START', got ";
  size_t count = 0;
  if (head.size() != 3 || !parse_uint(head[2], &count))
    return bad("line 1: expected '" + std::string(kPreemptStateMagic) + " VERSION JOBS', got " + quoted(lines[0]));
  EarlierServices fresh;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string where = "line " + std::to_string(i + 1) + ": ";
    if (i > count) return bad(where + "more job lines than the " + std::to_string(count) + " the header says");
    const std::vector<std::string_view> f = split(lines[i]);
    uint32_t id = 0;
    EarlierService e;
    if (f.size() != fields || !parse_uint(f[0], &id) || id == 0 || !parse_seconds(f[1], &e.run_s) ||
        !parse_seconds(f[2], &e.attained_gpu_s) || !parse_uint(f[3], &e.preemptions) || e.preemptions == 0 ||
        e.preemptions > kMaxPreemptions || (fields == 5 && !parse_uint(f[4], &e.last_start)))
      return bad(where + expected + quoted(lines[i]));
    if (!fresh.emplace(id, e).second) return bad(where + "job " + std::to_string(id) + " a second time");
  }
  if (fresh.size() != count)
    return bad("truncated: " + std::to_string(fresh.size()) + " of " + std::to_string(count) + " jobs");
  *jobs = std::move(fresh);
  return true;
}

std::string preempt_state_summary(const EarlierServices& jobs, size_t named) {
  std::string out;
  size_t n = 0;
  for (const auto& [id, e] : jobs) {
    if (n++ == named) break;
    out += (out.empty() ? "JobId=" : ", JobId=") + std::to_string(id) + " (" + std::to_string(e.preemptions) + "x, " +
           seconds_text(e.run_s) + " s, " + seconds_text(e.attained_gpu_s) + " GPU-s)";
  }
  if (jobs.size() > named) out += " +" + std::to_string(jobs.size() - named) + " more";
  return out;
}

Service run_service(const EarlierService* earlier, int64_t start_time, Service run) {
  if (!earlier) return run;
  if (already_counted(*earlier, start_time)) return {earlier->run_s, earlier->attained_gpu_s};
  return {earlier->run_s + run.run_s, earlier->attained_gpu_s + run.attained_gpu_s};
}

bool record_preemption(EarlierService* earlier, int64_t start_time, Service run) {
  if (already_counted(*earlier, start_time)) return false;
  earlier->run_s += run.run_s;
  earlier->attained_gpu_s += run.attained_gpu_s;
  earlier->preemptions += 1;
  earlier->last_start = start_time > 0 ? start_time : 0;  // the file holds no negative time
  return true;
}

}  // namespace duet::plugin
