#include "replay/sacct_trace.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "replay/emu_nodes.h"

namespace duet::replay {

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// "V100" or "A100|T4": the types the job got (a job spread over two types may
// run on either in duet, which runs a job on one type).
std::string type_constraint(const std::map<std::string, int>& by_type) {
  std::string s;
  for (const auto& [t, n] : by_type)
    if (n > 0) s += (s.empty() ? "" : "|") + upper(t);
  return s;
}

// The slowest of the job's nodes sets its pace (a job spread over nodes
// runs at its slowest part, as in the performance model).
double job_speed(const SacctJob& j, const std::string& name, const NodeSpeeds& speeds) {
  std::vector<std::string> nodes;
  try {
    nodes = expand_hostlist(j.node_list);
  } catch (const std::invalid_argument& e) { throw InputError(name, j.line, 0, std::string("NodeList: ") + e.what()); }
  if (nodes.empty()) throw InputError(name, j.line, 0, "NodeList: job " + j.job_id + " names no node");
  double s = 1e300;
  for (const std::string& n : nodes) {
    auto it = speeds.find(n);
    if (it == speeds.end())
      throw InputError(name, j.line, 0, "job " + j.job_id + " ran on node '" + n + "', which the node speeds lack");
    s = std::min(s, it->second);
  }
  return s;
}

}  // namespace

Trace trace_from_sacct(const std::vector<SacctJob>& jobs, const std::string& name, const SacctTraceOptions& opt,
                       SacctTraceCounts& counts) {
  Trace t;
  t.source = name;
  const std::vector<JobRuns> by_job = runs_by_job(jobs);
  std::vector<const JobRuns*> kept;
  for (const JobRuns& job : by_job) {
    const std::vector<const SacctJob*>& runs = job.runs;
    const SacctJob& j = job.last();
    if (!opt.partitions.empty() &&
        std::find(opt.partitions.begin(), opt.partitions.end(), j.partition) == opt.partitions.end()) {
      ++counts.other_partition;
      continue;
    }
    // Cancelled while pending: no start, or (some Slurm versions) a start
    // with no node.
    if (j.start < 0 || j.node_list.empty() || j.node_list == "None assigned") {
      ++counts.never_ran;
      continue;
    }
    if (j.end < 0) {
      ++counts.not_finished;
      continue;
    }
    if (j.gpus <= 0 && j.req_gpus <= 0) {
      ++counts.cpu_only;
      continue;
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      const SacctJob& r = *runs[i];
      if (r.end >= 0 && r.end < r.start)
        throw InputError(name, r.line, 0, "job " + r.job_id + " ends before it starts");
      // runs of a requeued job start at different times; the same start twice is the same run
      if (i > 0 && r.start >= 0 && r.start == runs[i - 1]->start)
        throw InputError(
            name, r.line, 0,
            "job " + r.job_id + " given twice (the same run as line " + std::to_string(runs[i - 1]->line) + ")");
    }
    counts.requeued += runs.size() > 1;
    kept.push_back(&job);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const JobRuns* a, const JobRuns* b) { return a->submit < b->submit; });
  const double t0 = kept.empty() ? 0 : kept.front()->submit;
  for (const JobRuns* k : kept) {
    const SacctJob* j = &k->last();
    JobSpec s;
    s.line = j->line;
    const std::string& id = j->job_id_raw.empty() ? j->job_id : j->job_id_raw;
    if (!all_digits(id))
      throw InputError(
          name, j->line, 0,
          "JobID '" + id + "' is not an integer (an array or heterogeneous job): add JobIDRaw to --format");
    s.id = std::stoll(id);
    s.submit = k->submit - t0;
    // every run's time: without checkpoints a requeued job redid its work, so
    // its demand on the cluster was all of it
    s.duration = 0;
    for (const SacctJob* r : k->runs) {
      if (r->start < 0 || r->end < 0) continue;
      double d = r->end - r->start;
      if (!opt.speeds.empty()) d *= job_speed(*r, name, opt.speeds);
      s.duration += d;
    }
    if (s.submit > kMaxTraceSeconds || s.duration > kMaxTraceSeconds)
      throw InputError(name, j->line, 0, "job " + id + ": submit or run time beyond 10 years (duet-trace(5))");
    s.gpus = j->gpus > 0 ? j->gpus : j->req_gpus;
    s.gpu_type = type_constraint(j->gpus_by_type);
    if (s.gpu_type.empty()) s.gpu_type = type_constraint(j->req_gpus_by_type);
    s.user = j->user;
    s.vc = opt.vc_from_partition ? j->partition : j->account;
    t.jobs.push_back(std::move(s));
  }
  std::set<int64_t> ids;
  for (const JobSpec& s : t.jobs)
    if (!ids.insert(s.id).second) throw InputError(name, s.line, 0, "job id " + std::to_string(s.id) + " given twice");
  return t;
}

}  // namespace duet::replay
