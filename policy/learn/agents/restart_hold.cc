#include "policy/learn/agents/restart_hold.h"

namespace duet::learn {

void RestartHold::apply(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) {
  // running_ is last call's set until the swap; seen_ is reused so that a
  // decision allocates nothing once the sets have grown.
  seen_.clear();
  int64_t demand = 0;
  for (const JobView& j : jobs) {
    if (j.running) {
      seen_.insert(j.id);
      preempted_at_.erase(j.id);  // restarted: the hold is over
    } else {
      demand += j.gpus;
      if (running_.count(j.id)) preempted_at_[j.id] = c.now_s;
    }
  }
  running_.swap(seen_);
  std::erase_if(preempted_at_, [&](const auto& e) { return c.now_s - e.second >= kRestartHoldS; });
  if (preempted_at_.empty() || demand <= c.free_gpus) return;
  int64_t budget = c.total_gpus;
  size_t out = 0;
  for (size_t k : order) {
    const JobView& j = jobs[k];
    if (j.gpus <= budget)
      budget -= j.gpus;
    else if (!j.running && preempted_at_.count(j.id))
      continue;  // held
    order[out++] = k;
  }
  order.resize(out);
}

}  // namespace duet::learn
