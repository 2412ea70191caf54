#include "replay/sacct.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/util/text.h"

namespace duet::replay {

bool parse_slurm_time(const std::string& s, double& out) {
  if (s.empty() || s == "Unknown" || s == "None") {
    out = -1;
    return true;
  }
  std::tm tm{};
  int n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &n) != 6 ||
      static_cast<size_t>(n) != s.size())
    return false;
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 60)
    return false;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return false;
  out = static_cast<double>(t);
  return true;
}

namespace {

std::vector<std::pair<std::string, int>> split_bar(const std::string& line) {
  std::vector<std::pair<std::string, int>> v;
  size_t b = 0;
  for (;;) {
    size_t e = line.find('|', b);
    v.emplace_back(line.substr(b, e == std::string::npos ? std::string::npos : e - b), static_cast<int>(b) + 1);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

// "billing=4,cpu=4,gres/gpu:v100=2,gres/gpu=2,mem=1G,node=1" in column `what`
void parse_tres(const std::string& tres, int& gpus, std::map<std::string, int>& gpus_by_type, const char* what,
                const std::string& name, int line, int col) {
  size_t b = 0;
  while (b < tres.size()) {
    size_t e = tres.find(',', b);
    if (e == std::string::npos) e = tres.size();
    std::string item = tres.substr(b, e - b);
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(name, line, col + static_cast<int>(b),
                       std::string(what) + ": expected NAME=VALUE, got '" + item + "'");
    std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (key.rfind("gres/gpu", 0) == 0) {
      char* endp = nullptr;
      const long n = std::strtol(val.c_str(), &endp, 10);
      if (val.empty() || *endp || n < 0 || n > kMaxJobGpus)
        throw InputError(name, line, col + static_cast<int>(b + eq + 1),
                         std::string(what) + ": expected a GPU count from 0 to " + std::to_string(kMaxJobGpus) +
                             " after '" + key + "=', got '" + val + "'");
      if (key == "gres/gpu") {
        gpus = static_cast<int>(n);
      } else if (key.size() > 9 && key[8] == ':') {
        const std::string type = key.substr(9);
        if (!plain_name_ok(type))
          throw InputError(name, line, col + static_cast<int>(b + 9),
                           std::string(what) + ": expected a GPU type of " + kPlainNameRule + ", got '" + type + "'");
        int& typed = gpus_by_type[lower(type)];
        if (typed + n > kMaxJobGpus)
          throw InputError(name, line, col + static_cast<int>(b),
                           std::string(what) + ": more than " + std::to_string(kMaxJobGpus) + " GPUs of type " + type);
        typed += static_cast<int>(n);
      }
    }
    b = e + 1;
  }
  if (gpus == 0) {
    std::int64_t all = 0;
    for (const auto& [t, n] : gpus_by_type) all += n;
    if (all > kMaxJobGpus)
      throw InputError(name, line, col, std::string(what) + ": more than " + std::to_string(kMaxJobGpus) + " GPUs");
    gpus = static_cast<int>(all);
  }
}

std::string optional_field(const std::vector<std::pair<std::string, int>>& f, const std::map<std::string, int>& col,
                           const char* key) {
  auto it = col.find(key);
  return it == col.end() ? std::string() : f[it->second].first;
}

SacctRows parse_rows(std::istream& in, const std::string& name, bool skip_steps) {
  SacctRows rows;
  std::string line;
  int lineno = 0;
  std::vector<std::pair<std::string, int>> header;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    header = split_bar(line);
    break;
  }
  if (header.empty())
    throw InputError(name, lineno, 0,
                     std::string("empty input: expected a header line with ") + kSacctFormat + " (sacct -P)");
  std::map<std::string, int> col;
  for (size_t i = 0; i < header.size(); ++i) {
    if (col.count(header[i].first))
      throw InputError(name, lineno, header[i].second, "column '" + header[i].first + "' given twice");
    col[header[i].first] = static_cast<int>(i);
  }
  for (const char* need : {"JobID", "Submit", "Start", "End", "NodeList", "AllocTRES", "State"})
    if (!col.count(need))
      throw InputError(
          name, lineno, 0,
          std::string("header lacks column '") + need + "' (expected sacct -P --format=" + kSacctFormat + ")");
  std::vector<SacctJob>& jobs = rows.jobs;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto f = split_bar(line);
    if (f.size() != header.size())
      throw InputError(
          name, lineno, 0,
          "expected " + std::to_string(header.size()) + " '|'-separated fields, got " + std::to_string(f.size()));
    SacctJob j;
    j.line = lineno;
    j.job_id = f[col["JobID"]].first;
    if (j.job_id.empty()) throw InputError(name, lineno, f[col["JobID"]].second, "empty JobID");
    if (j.job_id.find('.') != std::string::npos && skip_steps) {
      ++rows.steps;
      continue;
    }
    if (j.job_id.find('.') != std::string::npos)
      throw InputError(name, lineno, f[col["JobID"]].second,
                       "job step '" + j.job_id + "': run sacct with -X (allocations only)");
    for (auto [key, dst] : {std::pair{"Submit", &j.submit}, {"Start", &j.start}, {"End", &j.end}}) {
      const auto& [text, c] = f[col[key]];
      if (!parse_slurm_time(text, *dst))
        throw InputError(name, lineno, c,
                         std::string(key) + ": expected YYYY-MM-DDTHH:MM:SS, Unknown or None, got '" + text + "'");
    }
    if (j.submit < 0) throw InputError(name, lineno, f[col["Submit"]].second, "Submit: a job needs a submit time");
    j.node_list = f[col["NodeList"]].first;
    j.state = f[col["State"]].first;
    parse_tres(f[col["AllocTRES"]].first, j.gpus, j.gpus_by_type, "AllocTRES", name, lineno,
               f[col["AllocTRES"]].second);
    if (col.count("ReqTRES"))
      parse_tres(f[col["ReqTRES"]].first, j.req_gpus, j.req_gpus_by_type, "ReqTRES", name, lineno,
                 f[col["ReqTRES"]].second);
    j.job_id_raw = optional_field(f, col, "JobIDRaw");
    j.user = optional_field(f, col, "User");
    j.account = optional_field(f, col, "Account");
    j.partition = optional_field(f, col, "Partition");
    jobs.push_back(std::move(j));
  }
  return rows;
}

}  // namespace

std::vector<SacctJob> parse_sacct(std::istream& in, const std::string& name) {
  return parse_rows(in, name, false).jobs;
}

SacctRows parse_sacct_allocations(std::istream& in, const std::string& name) { return parse_rows(in, name, true); }

std::vector<JobRuns> runs_by_job(const std::vector<SacctJob>& rows) {
  std::vector<JobRuns> jobs;
  std::map<std::string, size_t> index;
  for (const SacctJob& row : rows) {
    auto [it, fresh] = index.emplace(row.job_id, jobs.size());
    if (fresh) jobs.emplace_back();
    JobRuns& job = jobs[it->second];
    job.runs.push_back(&row);
    if (row.submit >= 0 && (job.submit < 0 || row.submit < job.submit)) job.submit = row.submit;
  }
  for (JobRuns& job : jobs)
    std::stable_sort(job.runs.begin(), job.runs.end(), [](const SacctJob* a, const SacctJob* b) {
      return (a->start < 0 ? 1e300 : a->start) < (b->start < 0 ? 1e300 : b->start);
    });
  return jobs;
}

}  // namespace duet::replay
