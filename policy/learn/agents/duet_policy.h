// The learned scheduler behind the policy seam (policy/core/policy.h):
//   "duet" ordering  - the squeeze-and-communicate OrderingAgent scores every
//                      pending job (features.h); rank = descending score.
//   "duet" placement - RWGP posterior (mean, sd) per machine + the placement
//                      head choose machines over a speed prior; greedy machine set
//                      for jobs larger than any one machine's free GPUs, from
//                      the fastest machines that hold them: the one
//                      placement routine (placement_routine.h).
// Both are built from a model file (duet-model(5)). Torch-free header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "policy/core/job_type_speeds.h"
#include "policy/core/policy.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/gp/gp_hyper.h"
#include "policy/learn/model/model_file.h"

namespace duet::learn {

struct DuetPolicyOptions {
  // Placement: weight of the explicit speed prior added to the head's
  // score, prior_weight * (log rel_speed + mu - risk_aversion * sd). The head
  // learns a residual on top, so an untrained model already places sensibly.
  double prior_weight = kPlacementPriorWeight;
  double risk_aversion = kPlacementRiskAversion;
  // The speed floors' share (machine_set.h); 0: none (tests of the spread rules).
  double speed_floor = kSpreadSpeedShare;
  // Ordering: weight of the explicit QSSF-like prior added to the network's
  // score (add_order_prior, features.h); the network learns a residual.
  double order_prior_weight = 3.0;
  // Ordering: sample from softmax(scores / temperature) instead of ranking
  // greedily (training exploration); the seed drives the sampler.
  bool sample = false;
  double temperature = 1.0;
  std::uint64_t seed = 1;
  // Ordering paired with a "duet" placement (Simulator::set_policies):
  // exchange the agents' messages (duet-model(5), MESSAGES); false sends
  // zeros both ways, as a model trained without them expects.
  bool messages = true;
  // Ordering: false ranks only pending jobs even with a preemptive model, as
  // priority/duet with duet.conf Preemption=off (the blended prior stays).
  bool preemption = true;
  // Ablations: replace the model's GP kernel ("duet-rbf", "duet-nogp"), or
  // its rule for the machines a job no machine holds is spread over
  // (Model::spread; "duet-fastest-sets", "duet-tight-sets", ...).
  std::optional<KernelKind> kernel;
  std::optional<SpreadSets> spread;
  // Placement: each job type's speed on each GPU type (Gavel's table), so a
  // job of a known type is placed by its own speeds (job_machines,
  // placement_routine.h). Null: every job at its machines' known speeds, as
  // select/duet places without JobTypeSpeedsFile.
  std::shared_ptr<const JobTypeSpeeds> job_speeds;
  // Ablation "duet-type-blind": job_speeds ignored.
  bool type_blind = false;
};

std::unique_ptr<OrderingPolicy> make_duet_ordering(std::shared_ptr<const Model> m, const DuetPolicyOptions& o = {});
std::unique_ptr<PlacementPolicy> make_duet_placement(std::shared_ptr<const Model> m, const DuetPolicyOptions& o = {});

}  // namespace duet::learn
