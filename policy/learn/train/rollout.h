// Rollouts: both actors act in the simulator as deployed (the ordering
// network's score on top of the QSSF-like prior; the placement through the
// one placement routine, placement_routine.h), sampling their actions, and
// record what PPO and behaviour cloning need. Internal to the trainer.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "policy/core/policy.h"
#include "policy/io/trace.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/agents/restart_hold.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/train/actors.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"

namespace duet::learn {

// One scheduling pass as the actors saw it.
struct Pass {
  double t = 0;
  torch::Tensor jobs, cluster, machines;      // critic + ordering inputs
  OrderPrior prior;                           // the ordering prior under the network's score
  torch::Tensor perm;                         // sampled order (int64)
  std::vector<std::int64_t> ids;              // job ids in input order
  std::unordered_map<std::int64_t, int> pos;  // job id -> position in perm
  int prefix = 0;                             // L (0: nothing started)
  float old_logp = 0;
  std::vector<int> places;                             // PlaceStep indices
  torch::Tensor order_msgs;                            // [n, order_message] as sent in the rollout
  std::unordered_map<std::int64_t, std::int64_t> row;  // job id -> input row
  double reward = 0, value = 0, adv = 0, ret = 0;
};

// One placement: the machines its first machine was chosen from.
struct PlaceStep {
  torch::Tensor rows, prior;  // [k, kPlacementFeatures] choices, [k] speed prior
  std::int64_t job_row = -1;  // the job's row in its pass (its message); -1: zeros
  std::int64_t choice = 0;
  int bc_label = 0;  // best-fit choice (warm start)
  float old_logp = 0;
};

struct Episode {
  std::vector<Pass> passes;
  std::vector<PlaceStep> steps;
  double jct = 0, fees = 0;
  std::int64_t preemptions = 0;  // the simulator's, in this episode
};

// Shared state of both actors during one rollout.
struct Rollout {
  Nets* nets = nullptr;
  const Model* base = nullptr;
  DuetPolicyOptions popt;  // the priors' weights (the deployed ones), messages, spread rule, job speeds
  std::mt19937_64 rng;
  bool sample = true;  // false: greedy, as deployed
  std::vector<Pass> passes;
  std::vector<PlaceStep> steps;
  JobHistory history;
  RestartHold hold;  // as DuetOrdering's
  std::unique_ptr<PerformanceGp> gp;
  PlacementScores scores;
  std::vector<double> factor;  // job_machines' scratch
  std::vector<MachineView> view;
  std::unordered_map<std::int64_t, std::pair<Placement, double>> placed;  // job id -> where, its speed
  std::unordered_map<std::string, std::uint32_t> type_index;
  // The passes' and steps' size, roughly, and where the rollout stops
  // (record throws past it).
  std::size_t recorded_bytes = 0, byte_limit = 0;
  void record(std::size_t bytes, double now_s);

  Rollout(Nets& n, const Model& m, std::uint64_t seed, bool sample, const DuetPolicyOptions& agents);
  double gumbel();
  std::uint32_t job_type(std::string_view name) const;
  void ensure_gp(const ClusterView& c);
};

// The ordering actor: a Plackett-Luce sample (Gumbel-perturbed scores).
class TrainOrdering : public OrderingPolicy {
 public:
  explicit TrainOrdering(Rollout& r) : r_(r) {}
  std::string name() const override { return "duet-train"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override;
  void on_finish(const JobView& job, double run_s) override { r_.history.on_finish(job, run_s); }
  // As the deployed agent (DuetOrdering): what the model says, unless told
  // not to preempt (duet.conf Preemption=off).
  bool preemptive() const override { return r_.popt.preemption && r_.base->nets.ordering.preemptive != 0; }

 private:
  Rollout& r_;
};

// The placement actor: the placement routine with the network's scores and
// a sampled first machine. Places only after an ordering pass.
class TrainPlacement : public PlacementPolicy {
 public:
  explicit TrainPlacement(Rollout& r) : r_(r) {}
  std::string name() const override { return "duet-train"; }
  std::optional<Placement> place(const JobView& job, const ClusterView& c) override;
  void on_finish(const JobView& job, double run_s) override;

 private:
  Rollout& r_;
};

// One episode on trace window t in the simulator (`sim` with `seed` for its
// model's seed); reward of pass k =
// -(integral of jobs in system from pass k to pass k+1), in job-hours.
// `agents`: their messages, spread rule and job speeds (the priors' weights
// stay the deployed defaults). An episode whose record of decisions outgrows
// byte_limit (0: none) throws std::runtime_error saying so, before the host
// runs out of memory: a window so congested that its queue lasts for
// simulated years makes a decision pass every period all the while.
Episode rollout(Nets& nets, const Model& base, const Trace& t, const ClusterModel& c, const ThroughputTable& table,
                const PriceTable* prices, std::uint64_t seed, const SimOptions& sim, bool sample,
                const DuetPolicyOptions& agents, std::size_t byte_limit = 0);

}  // namespace duet::learn
