// What the plugins show a policy: plain, Slurm-free copies of pending jobs and
// nodes, built under slurmctld's locks and valid only during the call. The
// Slurm adapters fill these (plugins/slurm/slurm_views.h); a policy sees them
// as policy/core's JobView/MachineView, made in one place (policy_views.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/core/policy.h"  // kUnknown, the one "not known" of both vocabularies

namespace duet::plugin {

// One pending (or about-to-start) GPU job; for a preemptive model also a
// running one.
struct JobInfo {
  uint32_t job_id = 0;
  uint32_t user_id = 0;
  std::string name;  // job name (duet-emujob encodes its type there)
  std::string partition;
  std::string account;
  std::string comment;      // user's --comment
  int64_t submit_time = 0;  // Unix seconds
  double wait_s = 0;        // now - eligible/submit time
  uint32_t gpus = 0;        // total GPUs asked for (all nodes)
  std::string gpu_type;     // "" = any type
  uint32_t min_nodes = 1;
  uint32_t cpus = 1;
  double time_limit_s = kUnknown;  // seconds
  // Service so far, over all runs (a job requeued by a preemption keeps what
  // it had): only with Preemption=requeue and a preemptive model, else 0.
  bool running = false;
  double run_s = 0;           // wall seconds run
  double attained_gpu_s = 0;  // GPU-seconds received
  int64_t begin_time = 0;     // not eligible before (sbatch --begin; Unix seconds), 0 = none
};

// One node as the scheduler sees it now.
struct NodeInfo {
  std::string name;
  std::string gpu_type;  // first configured GPU type, "" if untyped
  uint32_t gpus_total = 0;
  uint32_t gpus_alloc = 0;
  uint32_t cpus_total = 0;
  uint32_t jobs_running = 0;  // jobs allocated on it now (co-location)
  bool usable = true;         // not down, drained or failing
};

struct ClusterInfo {
  int64_t now = 0;  // Unix seconds
  std::vector<NodeInfo> nodes;
  uint32_t total_gpus() const {
    uint32_t n = 0;
    for (const NodeInfo& node : nodes) n += node.gpus_total;
    return n;
  }
};

}  // namespace duet::plugin
