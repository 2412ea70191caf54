#include "replay/sacct_metrics.h"

#include <algorithm>
#include <tuple>

namespace duet::replay {

namespace {

// Adds one run's GPU-seconds, fees and energy.
void add_run_usage(const SacctJob& run, const PriceTable& prices, double scale,
                   const std::map<std::string, std::string>& node_types, SimResult& r) {
  const double secs = (run.end - run.start) * scale;
  r.busy_gpu_s += run.gpus * secs;
  int typed = 0;
  auto charge = [&](const std::string& type, int n) {
    const GpuPrice& p = prices.lookup(type);
    r.fees_usd += n * secs / 3600.0 * p.usd_per_gpu_hour;
    r.energy_kwh += n * secs / 3600.0 * p.watts / 1000.0;
  };
  for (const auto& [type, n] : run.gpus_by_type) {
    charge(type, n);
    typed += n;
  }
  if (run.gpus > typed) {
    auto it = node_types.find(run.node_list);
    charge(it != node_types.end() ? it->second : "default", run.gpus - typed);
  }
}

}  // namespace

SimResult metrics_from_sacct(const std::vector<SacctJob>& rows, const PriceTable& prices, int total_gpus, double scale,
                             const std::map<std::string, std::string>& node_types, SacctCounts* counts) {
  SimResult r;
  r.total_gpus = total_gpus;
  SacctCounts c;
  double first_submit = 1e300, last_end = -1e300, jct_sum = 0, queue_sum = 0;
  // (time, d_busy, d_queued, d_running): the cluster state as a step function
  std::vector<std::tuple<double, int, int, int>> ev;
  for (const JobRuns& job : runs_by_job(rows)) {
    const std::vector<const SacctJob*>& runs = job.runs;
    const double submit = job.submit;
    first_submit = std::min(first_submit, submit);
    const SacctJob& first = job.first();
    const SacctJob& last = job.last();
    if (first.start < 0) {
      ++c.not_started;
      continue;
    }
    if (last.start < 0 || last.end < 0) {
      ++c.not_ended;
      continue;
    }
    ++c.finished;
    c.requeued += runs.size() > 1;
    r.preemptions += static_cast<int64_t>(runs.size()) - 1;
    if (last.state != "COMPLETED") ++c.non_completed;
    const double jct = (last.end - submit) * scale, queue = (first.start - submit) * scale;
    r.jct_sorted.push_back(jct);
    jct_sum += jct;
    queue_sum += queue;
    r.max_wait_s = std::max(r.max_wait_s, queue);
    last_end = std::max(last_end, last.end);
    double queued_since = submit;  // queued from submit, and again from each requeue to the next start
    for (const SacctJob* run : runs) {
      add_run_usage(*run, prices, scale, node_types, r);
      ev.emplace_back(queued_since, 0, +1, 0);
      ev.emplace_back(run->start, +run->gpus, -1, +1);
      ev.emplace_back(run->end, -run->gpus, 0, -1);
      queued_since = run->end;
    }
  }
  r.jobs = c.finished;
  std::sort(r.jct_sorted.begin(), r.jct_sorted.end());
  if (c.finished > 0) {
    r.avg_jct_s = jct_sum / c.finished;
    r.avg_queue_s = queue_sum / c.finished;
    r.p50_jct_s = percentile(r.jct_sorted, 50);
    r.p95_jct_s = percentile(r.jct_sorted, 95);
    r.p99_jct_s = percentile(r.jct_sorted, 99);
    r.makespan_s = (last_end - first_submit) * scale;
    r.gpu_util = total_gpus > 0 && r.makespan_s > 0 ? r.busy_gpu_s / (total_gpus * r.makespan_s) : 0;
  }
  std::sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  Sample s;
  for (size_t i = 0; i < ev.size(); ++i) {
    s.busy_gpus += std::get<1>(ev[i]);
    s.queued += std::get<2>(ev[i]);
    s.running += std::get<3>(ev[i]);
    if (i + 1 < ev.size() && std::get<0>(ev[i + 1]) == std::get<0>(ev[i])) continue;  // one sample per instant
    s.t = (std::get<0>(ev[i]) - first_submit) * scale;
    r.samples.push_back(s);
  }
  if (counts) *counts = c;
  return r;
}

}  // namespace duet::replay
