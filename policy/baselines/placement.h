// Baseline placement policies. Each first looks for one machine that can hold
// the whole job; when none can, it spreads the job over machines in its own
// preference order, taking all free GPUs of each until enough (a multi-machine
// job; the model charges the spread penalty). Only machines whose GPU type the
// job allows are used. Ties go to the lower machine index.
//   first-fit      the first machine in cluster-file order
//   best-fit       the machine with the fewest free GPUs that fits
//                  (consolidate); spread over the most-free machines first
//   least-loaded   the machine with the most free GPUs, then fewest jobs
//                  (spread load); spread like best-fit
//   random         a uniformly random machine that fits (seeded); spread in a
//                  random order
//   fastest-first  the machine with the highest known speed that fits;
//                  spread in speed order
// Each NAME-wait variant (make_waiting) spreads only a job that no machine it
// may use could hold whole; such a job waits for a machine instead, as the
// learned placement does (one_machine_could_hold, policy/core/policy.h).
#pragma once

#include <cstdint>
#include <memory>

#include "policy/core/policy.h"

namespace duet {

std::unique_ptr<PlacementPolicy> make_first_fit();
std::unique_ptr<PlacementPolicy> make_best_fit();
std::unique_ptr<PlacementPolicy> make_least_loaded();
std::unique_ptr<PlacementPolicy> make_random_placement(uint64_t seed);
std::unique_ptr<PlacementPolicy> make_fastest_first();
// `inner`, named "<its name>-wait", except that a job no machine has the GPUs
// free for, but one could hold whole, is not placed (it waits).
std::unique_ptr<PlacementPolicy> make_waiting(std::unique_ptr<PlacementPolicy> inner);

// Takes free GPUs of allowed machines in `order` until the job has enough;
// nothing if they do not add up. Shared by the baselines and learned policies.
std::optional<Placement> spread_in_order(const JobView& job, const ClusterView& c, std::span<const int> order);

}  // namespace duet
