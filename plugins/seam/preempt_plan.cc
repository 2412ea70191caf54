#include "plugins/seam/preempt_plan.h"

#include <algorithm>
#include <numeric>

namespace duet::plugin {

PreemptLimits PreemptLimits::from(const DuetConf& c) {
  return {c.preempt_min_run_time_s, c.preempt_job_interval_s, c.preempt_max_restarts, c.preempt_max_per_rescore};
}

std::string preempt_blocker(const PreemptLimits& limits, const RunningJobState& job) {
  auto secs = [](double s) { return std::to_string(static_cast<long long>(s)) + " s"; };
  if (!job.requeueable) return job.not_requeueable.empty() ? std::string("not requeue-able") : job.not_requeueable;
  if (job.run_s < limits.min_run_time_s)
    return "ran " + secs(job.run_s) + ", less than PreemptMinRunTime=" + std::to_string(limits.min_run_time_s);
  if (job.restarts >= static_cast<uint32_t>(limits.max_restarts))
    return "requeued " + std::to_string(job.restarts) +
           " times already, PreemptMaxRestarts=" + std::to_string(limits.max_restarts);
  if (job.restarts > 0 && job.run_s < limits.job_interval_s)
    return "requeued before and ran " + secs(job.run_s) +
           " since, less than PreemptJobInterval=" + std::to_string(limits.job_interval_s);
  return "";
}

PreemptPlan plan_preemption(std::span<const PlanJob> jobs, uint32_t total_gpus, size_t max_preempt) {
  PreemptPlan p;
  const size_t n = jobs.size();
  p.keep.assign(n, 0);
  p.rank.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].score > jobs[b].score; });
  for (size_t r = 0; r < n; ++r) p.rank[order[r]] = r + 1;

  uint64_t budget = total_gpus;
  auto take = [&](size_t i) {
    p.keep[i] = 1;
    budget -= std::min<uint64_t>(budget, jobs[i].gpus);
  };
  for (size_t i = 0; i < n; ++i)
    if (jobs[i].running && jobs[i].pinned) take(i);
  for (size_t i : order) {
    const PlanJob& j = jobs[i];
    if (p.keep[i] || (!j.running && !j.eligible)) continue;
    if (j.gpus <= budget) {
      take(i);
      if (!j.running) ++p.kept_pending;
    }
  }
  if (p.kept_pending == 0) return p;
  for (auto it = order.rbegin(); it != order.rend() && p.preempt.size() < max_preempt; ++it)
    if (jobs[*it].running && !p.keep[*it]) p.preempt.push_back(*it);
  return p;
}

bool preemption_contended(std::span<const uint32_t> pending_gpus, uint32_t free_gpus) {
  uint64_t demand = 0;
  for (uint32_t g : pending_gpus) demand += g;
  return demand > free_gpus;
}

}  // namespace duet::plugin
