#include <algorithm>
#include <map>

#include "policy/sim/sim_internal.h"

namespace duet::sim {

void Accounting::init(const std::vector<SimJob>& jobs, const SimOptions& options, size_t gpu_types) {
  busy_type_s.assign(gpu_types, 0);
  if (jobs.empty()) return;
  first_submit = jobs.front().spec->submit;
  double span = jobs.back().spec->submit - first_submit;
  double mean = 0;
  for (const auto& j : jobs) mean += j.spec->duration;
  mean /= static_cast<double>(jobs.size());
  sample_period = options.sample_period_s > 0 ? options.sample_period_s : std::max(1.0, (span + mean) / 1000.0);
  next_sample = first_submit;
}

void Accounting::sample_until(double t, int busy_gpus, int queued, int running) {
  while (next_sample <= t) {
    samples.push_back(Sample{next_sample, busy_gpus, queued, running});
    next_sample = later(next_sample, sample_period, "sample");
  }
}

namespace {

// JCTs, queueing delays and per-VC means over the finished jobs.
void summarize_jobs(const std::vector<SimJob>& jobs, SimResult& r) {
  std::map<std::string, std::pair<double, int64_t>> vc;
  double sum = 0, qsum = 0;
  for (const SimJob& j : jobs) {
    if (j.st != JobState::Done) continue;
    double jct = j.finish - j.spec->submit;
    double wait = std::max(0.0, jct - j.run_s);
    r.jct_sorted.push_back(jct);
    sum += jct;
    qsum += wait;
    r.max_wait_s = std::max(r.max_wait_s, wait);
    auto& a = vc[j.spec->vc];
    a.first += jct, a.second += 1;
  }
  r.jobs = static_cast<int64_t>(r.jct_sorted.size());
  std::sort(r.jct_sorted.begin(), r.jct_sorted.end());
  if (r.jobs > 0) {
    r.avg_jct_s = sum / static_cast<double>(r.jobs);
    r.avg_queue_s = qsum / static_cast<double>(r.jobs);
    r.p50_jct_s = percentile(r.jct_sorted, 50);
    r.p95_jct_s = percentile(r.jct_sorted, 95);
    r.p99_jct_s = percentile(r.jct_sorted, 99);
  }
  for (const auto& [k, a] : vc) r.vc_avg_jct_s[k.empty() ? "-" : k] = a.first / static_cast<double>(a.second);
}

// Busy GPU-seconds, fees and energy per GPU type; running segments not yet
// closed count as busy up to now.
void summarize_gpu_time(const SimState& s, SimResult& r) {
  std::vector<double> busy_s = s.acct.busy_type_s;
  for (uint32_t i : s.q.running)
    for (const PlacementPart& q : s.jobs[i].placement)
      busy_s[s.cluster.gpu_type(q.machine)] += (s.now - s.jobs[i].seg_start) * q.gpus;
  for (size_t t = 0; t < busy_s.size(); ++t) {
    r.busy_gpu_s += busy_s[t];
    if (s.prices) {
      const GpuPrice& p = s.prices->lookup(s.cluster.type_names()[t]);
      r.fees_usd += busy_s[t] * p.usd_per_gpu_hour / 3600.0;
      r.energy_kwh += busy_s[t] * p.watts / 3.6e6;
    }
  }
}

}  // namespace

SimResult summarize(const SimState& s) {
  SimResult r;
  const Policies& pol = s.pol;
  if (pol.joint) {
    r.ordering = r.placement = pol.joint->name();
  } else if (pol.ordering && pol.placement) {
    r.ordering = pol.ordering->name(), r.placement = pol.placement->name(), r.oracle = pol.ordering->oracle();
  }
  r.ideal = s.cluster.perf().ideal();
  r.seed = s.opt.model.seed;
  r.total_gpus = s.cluster.total_gpus();
  r.events = s.acct.events;
  r.preemptions = s.acct.preemptions;
  summarize_jobs(s.jobs, r);
  if (r.jobs > 0) r.makespan_s = s.acct.last_finish - s.acct.first_submit;
  summarize_gpu_time(s, r);
  const int total = s.cluster.total_gpus();
  if (r.makespan_s > 0 && total > 0) r.gpu_util = r.busy_gpu_s / (total * r.makespan_s);
  r.samples = s.acct.samples;
  return r;
}

}  // namespace duet::sim
