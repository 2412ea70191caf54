// The learned placement agent's one routine, shared by its three callers:
// the simulator's "duet" placement (duet_policy.cc), the trainer's rollouts
// (policy/learn/train/rollout.cc) and select/duet (plugins/select/duet/placement_model.cc).
//
//   candidates     machines with free GPUs the job may use
//   speed floor    a job keeps to machines at least half as fast as the
//                  fastest machine (or set) that could hold it, for a while
//   fastest floor  a job no machine holds alone is spread only over the
//                  fastest machines that hold it (machine_set.h)
//   score          feature rows (placement_features.h) -> the caller's
//                  learned score (PlacementScorer) + the speed prior
//   machine set    the chosen machine if it holds the job, else it and the
//                  rest re-scored with locality to it, best first
//
// What differs between the callers is only where the learned score comes
// from (the placement head in plain C++, or the LibTorch network while
// training) and how the first machine is chosen (greedy, or sampled while
// training). select/duet stops after the score: it turns the scores into a
// node preference and cons_tres builds the set. Torch-free and Slurm-free:
// the plugins link it (libduetlearn_agents.la).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "policy/core/job_type_speeds.h"
#include "policy/core/policy.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/gp/machine_graph.h"

namespace duet::learn {

class PerformanceGp;
class PlacementHead;

// One scoring pass over candidate machines (reused between calls).
struct PlacementScores {
  std::vector<std::uint32_t> machines;  // the candidates: indices into the cluster's machines
  std::vector<MachineState> states;     // their state, as placement_features reads it
  std::vector<float> rows;              // feature rows, kPlacementFeatures per candidate
  std::vector<float> learned;           // the scorer's score per candidate
  std::vector<double> prior;            // placement_prior of each row
  std::vector<float> total;             // learned + prior: what candidates are ranked by
  std::vector<std::uint32_t> among;     // scratch: the positions the first machine is chosen from
};

// What each caller supplies.
class PlacementScorer {
 public:
  virtual ~PlacementScorer() = default;
  // scores[i] for the k feature rows (kPlacementFeatures each, row-major).
  virtual void score(std::span<const float> rows, std::size_t k, std::vector<float>& scores) = 0;
  // The first machine: a position into s.machines, one of `among` (never
  // empty). Default: the highest total, the first of equals.
  virtual std::uint32_t choose(const PlacementScores& s, std::span<const std::uint32_t> among);
};

// The placement head (plain C++) with the ordering agent's message for the
// job (empty: zeros): the simulator's agent's and select/duet's scorer.
class HeadScorer : public PlacementScorer {
 public:
  HeadScorer(const PlacementHead& head, std::span<const float> order_msg) : head_(head), msg_(order_msg) {}
  void score(std::span<const float> rows, std::size_t k, std::vector<float>& scores) override;

 private:
  const PlacementHead& head_;
  std::span<const float> msg_;
};

struct PriorWeights {
  double weight = kPlacementPriorWeight;
  double risk_aversion = kPlacementRiskAversion;
  // The spread rule: the model's (fastest), its ablations ("duet-tight-sets",
  // "duet-slow-sets") or the agent's choice (duet train --spread-sets learned).
  SpreadSets spread = SpreadSets::fastest;
  // The speed floors' share (machine_set.h: the spread floor and the
  // one-machine floor); 0: none.
  double speed_floor = kSpreadSpeedShare;
};

// Candidates: in cluster order, the machines with free GPUs that
// allowed(index) admits. Returns their free GPUs together.
template <class Allowed>
int placement_candidates(std::span<const MachineView> machines, Allowed allowed, std::vector<std::uint32_t>& cand) {
  cand.clear();
  int free = 0;
  for (std::size_t i = 0; i < machines.size(); ++i) {
    if (machines[i].free_gpus <= 0 || !allowed(i)) continue;
    cand.push_back(static_cast<std::uint32_t>(i));
    free += machines[i].free_gpus;
  }
  return free;
}

// The speed floor (machine_set.h) over every machine allowed(index) admits,
// busy or not: one_machine_speed_limit (with `share`) when one of them could
// hold the job alone, else spread_speed_limit; 0 once the job has waited
// that floor's time (`wait_s`: kOneMachineFloorMaxWaitS, spread_floor_holds).
template <class Allowed>
double speed_floor_limit(std::span<const MachineView> machines, int gpus, double wait_s, double share,
                         Allowed allowed) {
  if (!(share > 0)) return 0;
  const bool one = one_machine_could_hold(machines, gpus, allowed);
  if (!(one ? wait_s < kOneMachineFloorMaxWaitS : spread_floor_holds(wait_s))) return 0;
  thread_local std::vector<std::uint32_t> all;  // called for every placement: no allocation once grown
  all.clear();
  for (std::size_t i = 0; i < machines.size(); ++i)
    if (allowed(i)) all.push_back(static_cast<std::uint32_t>(i));
  return one ? one_machine_speed_limit(machines, gpus, all, share) : spread_speed_limit(machines, gpus, all, share);
}

// Drops from cand the machines below speed_floor_limit. Returns the free
// GPUs of those left.
template <class Allowed>
int keep_to_speed_floor(std::span<const MachineView> machines, int gpus, double wait_s, double share, Allowed allowed,
                        std::vector<std::uint32_t>& cand) {
  const double limit = speed_floor_limit(machines, gpus, wait_s, share, allowed);
  std::erase_if(cand, [&](std::uint32_t m) { return machines[m].speed < limit; });
  int free = 0;
  for (std::uint32_t m : cand) free += machines[m].free_gpus;
  return free;
}

// The state of machines idx as placement_features reads it; locality 1 on
// `rack` (>= 0), else 0.
void machine_states(std::span<const MachineView> machines, std::span<const std::uint32_t> idx, int rack,
                    std::vector<MachineState>& states);
// machine_states, then their feature rows for `job`.
void candidate_rows(const PerformanceGp& gp, std::span<const MachineView> machines, std::span<const std::uint32_t> idx,
                    const PlacementJob& job, int rack, std::vector<MachineState>& states, std::vector<float>& rows);

// The score step over s.machines: fills states, rows, learned, prior, total.
void score_candidates(const PerformanceGp& gp, std::span<const MachineView> machines, const PlacementJob& job, int rack,
                      PlacementScorer& scorer, const PriorWeights& w, PlacementScores& s);

// How a job no machine holds alone is spread under w.spread (machine_set.h),
// given the fastest floor of its candidates s.machines (> 0): fastest keeps
// the machines at or above the floor; tight keeps them too but flips the
// prior's sign, so the slowest of them come first; slow flips it with no
// floor; learned scores s.machines with a prior that peaks at the floor and
// lets the scorer choose the first machine: above the floor, the fastest
// rule; at or below it, tight from its speed. place_job builds the set from
// the plan; select/duet turns it into a node preference.
struct SpreadPlan {
  PriorWeights prior;                  // what the set's machines are scored with
  double keep = 0;                     // machines slower than this are left out (0: none)
  std::optional<std::uint32_t> first;  // learned: the machine the set starts from
};
SpreadPlan plan_spread(const PerformanceGp& gp, std::span<const MachineView> machines, double floor,
                       const PlacementJob& pj, PlacementScorer& scorer, const PriorWeights& w, PlacementScores& s);

// The whole routine for one job (job.gpus GPUs, its type constraint; pj its
// GP type). nullopt when the machines it may use cannot hold it now, when
// those above its speed floor cannot (keep_to_speed_floor; only until it has
// waited that floor's time), or when it would have to be spread but one of
// them could hold it whole (one_machine_could_hold).
std::optional<Placement> place_job(const PerformanceGp& gp, std::span<const MachineView> machines, const JobView& job,
                                   const PlacementJob& pj, PlacementScorer& scorer, const PriorWeights& w,
                                   PlacementScores& s);

// The machines as `job` sees them: each one's speed times the job type's
// factor on its GPU type (job_type_speeds.h), in `scratch`; c.machines
// itself when speeds is null or does not know the job's type. The routine,
// its prior and the speed a placement is expected to run at then all use the
// job's own speeds, as the type-affinity baseline does.
std::span<const MachineView> job_machines(const JobTypeSpeeds* speeds, const JobView& job, const ClusterView& c,
                                          std::vector<double>& factor, std::vector<MachineView>& scratch);

// The speed a placement runs at: its slowest machine's.
double placement_speed(std::span<const MachineView> machines, const Placement& p);

// The GP's view of a simulated cluster's machines (type name, rack "r<N>",
// log speed as the RBF kernel's feature).
std::vector<MachineDesc> machine_descs(const ClusterView& c);

}  // namespace duet::learn
