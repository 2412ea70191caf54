#include <algorithm>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/model/job_types.h"
#include "policy/sim/sim_internal.h"

namespace duet::sim {

namespace {

// "v100|p100" as a bit per cluster GPU type; "" = 0 (any type).
uint64_t type_mask(const JobSpec& s, const Trace& trace, const ClusterState& cluster) {
  if (s.gpu_type.empty()) return 0;
  uint64_t mask = 0;
  size_t b = 0;
  for (;;) {
    size_t e = s.gpu_type.find('|', b);
    std::string name = s.gpu_type.substr(b, e == std::string::npos ? std::string::npos : e - b);
    int t = cluster.cluster_model().find_type(name);
    if (t < 0) {
      std::string known;
      for (auto& n : cluster.type_names()) known += (known.empty() ? "" : ", ") + n;
      throw InputError(trace.source, s.line, 0,
                       fmt::format("job {}: gpu_type '{}' is not in the cluster (types: {})", s.id, name, known));
    }
    mask |= uint64_t{1} << t;
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return mask;
}

// The trace readers refuse these; a trace built in code is checked here.
void check_times(const JobSpec& s, const Trace& trace) {
  if (!(s.submit >= 0 && s.submit <= kMaxTraceSeconds && s.duration >= 0 && s.duration <= kMaxTraceSeconds))
    throw InputError(trace.source, s.line, 0,
                     fmt::format("job {}: submit {} s and duration {} s must be from 0 to {} s (10 years)", s.id,
                                 s.submit, s.duration, kMaxTraceSeconds));
}

}  // namespace

std::vector<SimJob> load_jobs(const Trace& trace, const ThroughputTable& table, const ClusterState& cluster,
                              const SimOptions& options, int64_t& dropped) {
  std::vector<size_t> idx(trace.jobs.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
  std::vector<SimJob> jobs(idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    const JobSpec& s = trace.jobs[idx[k]];
    check_times(s, trace);
    SimJob& j = jobs[k];
    j.spec = &s;
    j.gpus = s.gpus;
    j.remaining = s.duration;
    j.jt = assign_job_type(s, table, options.model.seed, trace.source);
    j.mask = type_mask(s, trace, cluster);
    const int cap = cluster.usable_free(j.mask);  // the whole cluster is free now
    if (s.gpus > cap) {
      if (!options.drop_oversized)
        throw InputError(trace.source, s.line, 0,
                         fmt::format("job {} asks {} GPUs but the cluster has only {} it may use "
                                     "(use --drop-oversized to leave such jobs out)",
                                     s.id, s.gpus, cap));
      j.st = JobState::Dropped;
      ++dropped;
    }
  }
  return jobs;
}

JobView job_view(const SimJob& j, const ThroughputTable& table, double now) {
  JobView v;
  v.id = j.spec->id;
  v.gpus = j.gpus;
  v.type_mask = j.mask;
  v.submit_s = j.spec->submit;
  v.user = j.spec->user;
  v.vc = j.spec->vc;
  v.job_type = table.job_type_name(j.jt);
  v.running = j.st == JobState::Running;
  double seg = v.running ? now - j.seg_start : 0;
  v.run_s = j.run_s + seg;
  v.attained_gpu_s = j.attained + seg * j.gpus;
  double end = j.st == JobState::Done ? j.finish : now;
  v.wait_s = std::max(0.0, end - j.spec->submit - v.run_s);
  v.oracle_duration_s = j.spec->duration;
  v.oracle_remaining_s = std::max(0.0, v.running ? j.remaining - j.rate * (now - j.last) : j.remaining);
  return v;
}

void JobQueues::resize(size_t jobs) {
  running_pos.assign(jobs, 0);
  completions.resize(jobs);
}

void JobQueues::add_running(uint32_t i) {
  running_pos[i] = static_cast<uint32_t>(running.size());
  running.push_back(i);
}

void JobQueues::remove_running(uint32_t i) {
  uint32_t pos = running_pos[i], last = running.back();
  running[pos] = last;
  running_pos[last] = pos;
  running.pop_back();
  completions.remove(i);
}

}  // namespace duet::sim
