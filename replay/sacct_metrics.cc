#include "replay/sacct_metrics.h"

#include <algorithm>
#include <tuple>

namespace duet::replay {

SimResult metrics_from_sacct(const std::vector<SacctJob>& jobs, const PriceTable& prices, int total_gpus, double scale,
                             const std::map<std::string, std::string>& node_types, SacctCounts* counts) {
  SimResult r;
  r.total_gpus = total_gpus;
  SacctCounts c;
  double first_submit = 1e300, last_end = -1e300, jct_sum = 0, queue_sum = 0;
  // (time, d_busy, d_queued, d_running): the cluster state as a step function
  std::vector<std::tuple<double, int, int, int>> ev;
  for (const SacctJob& j : jobs) {
    first_submit = std::min(first_submit, j.submit);
    if (j.start < 0) {
      ++c.not_started;
      continue;
    }
    if (j.end < 0) {
      ++c.not_ended;
      continue;
    }
    ++c.finished;
    if (j.state != "COMPLETED") ++c.non_completed;
    const double jct = (j.end - j.submit) * scale, queue = (j.start - j.submit) * scale;
    const double run = (j.end - j.start) * scale;
    r.jct_sorted.push_back(jct);
    jct_sum += jct;
    queue_sum += queue;
    r.max_wait_s = std::max(r.max_wait_s, queue);
    last_end = std::max(last_end, j.end);
    r.busy_gpu_s += j.gpus * run;
    int typed = 0;
    for (const auto& [type, n] : j.gpus_by_type) {
      const GpuPrice& p = prices.lookup(type);
      r.fees_usd += n * run / 3600.0 * p.usd_per_gpu_hour;
      r.energy_kwh += n * run / 3600.0 * p.watts / 1000.0;
      typed += n;
    }
    if (j.gpus > typed) {
      auto it = node_types.find(j.node_list);
      const GpuPrice& p = prices.lookup(it != node_types.end() ? it->second : "default");
      r.fees_usd += (j.gpus - typed) * run / 3600.0 * p.usd_per_gpu_hour;
      r.energy_kwh += (j.gpus - typed) * run / 3600.0 * p.watts / 1000.0;
    }
    ev.emplace_back(j.submit, 0, +1, 0);
    ev.emplace_back(j.start, +j.gpus, -1, +1);
    ev.emplace_back(j.end, -j.gpus, 0, -1);
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
