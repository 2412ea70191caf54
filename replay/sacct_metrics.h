// The simulator's metrics (policy/sim/metrics.h) from accounting records.
// A job counts when it started and ended (any final state; cancelled-before-
// start and still-running jobs are counted apart). JCT = End - Submit, queue
// = Start - Submit, busy GPU-seconds = GPUs x (End - Start), makespan = last
// End - first Submit, all multiplied by `scale` (the replay's time scale, so
// figures are in trace seconds). Fees and energy per GPU type from AllocTRES
// gres/gpu:TYPE; GPUs without a type take the price of the node's type from
// `node_types` (single-node jobs) or the `default` price row.
// Rows with the same JobID are the runs of one requeued job (sacct -D): it
// counts once, from its first run's Submit (a requeue resets Submit) to its
// last run's End, in its last run's state; every run's GPU time is busy and
// paid for, and each requeue is a preemption.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policy/model/prices.h"
#include "replay/sacct.h"
#include "policy/sim/metrics.h"

namespace duet::replay {

struct SacctCounts {
  int64_t finished = 0, not_started = 0, not_ended = 0, non_completed = 0;
  int64_t requeued = 0;  // finished jobs that ran more than once
};

SimResult metrics_from_sacct(const std::vector<SacctJob>& jobs, const PriceTable& prices, int total_gpus, double scale,
                             const std::map<std::string, std::string>& node_types, SacctCounts* counts);

}  // namespace duet::replay
