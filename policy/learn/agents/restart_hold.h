// The learned ordering's restart hold: a job it preempted is not restarted,
// for kRestartHoldS after its preemption, on GPUs that the jobs it keeps
// passed over. In a preemptive pass the simulator keeps the ranked prefix
// that fits the cluster's GPUs and then offers the GPUs left down the list;
// a job just preempted took them as a filler, was outside what is kept again
// at the next decision and preempted again, paying the restart each time (a
// 32-GPU job 186 times on a heavy-tailed scenario), while holding GPUs that a
// kept job waiting for a whole machine needed (models/HISTORY.md, *The
// restart hold*). The jobs ranked keep their order; the held ones are left
// out. Torch-free; DuetOrdering and the trainer's rollouts use it.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "policy/core/policy.h"

namespace duet::learn {

inline constexpr double kRestartHoldS = 1800;

class RestartHold {
 public:
  // Notes the jobs running now and those seen running at the last call and
  // pending now (preempted since); then, when the pending jobs ask for more
  // GPUs than are free (a preemptive pass), drops from `order` each pending
  // job preempted less than kRestartHoldS ago whose GPUs do not fit what the
  // jobs ranked above it leave of the cluster's.
  void apply(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order);

 private:
  std::unordered_set<int64_t> running_, seen_;  // at the last call; scratch
  std::unordered_map<int64_t, double> preempted_at_;
};

}  // namespace duet::learn
