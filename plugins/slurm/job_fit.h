// Which nodes a job may use at all (its partition, its GPU type, a simple
// feature constraint, not excluded) and, for those, why it cannot take one
// now: for the job's explanation (plugins/seam/explain.h). Callers hold the
// slurmctld job and node read locks.
#pragma once

#include <string>
#include <vector>

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

struct NodeFit {
  bool may_use = false;  // the job could ever run there
  std::string busy;      // "" = free for it now; else "down", "needs 4 GPUs, 0 free", ...
};

// One entry per node, in node table order (the order of cluster_info()).
// `offered`: the nodes slurmctld offers this scheduling attempt (NULL: all).
std::vector<NodeFit> job_node_fit(const job_record_t* job, bitstr_t* offered);

}  // namespace duet::plugin
