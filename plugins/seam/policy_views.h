// The one place where what the Slurm adapters fill (views.h: JobInfo,
// NodeInfo, ClusterInfo, owning and Slurm-shaped) becomes what a policy sees
// (policy/core/policy.h: JobView, MachineView, ClusterView, the simulator's
// and the trainer's vocabulary). Both learned agents' adapters call it, so a
// node or a job means the same to the ordering and the placement agent.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "plugins/seam/views.h"
#include "policy/core/policy.h"

namespace duet::plugin {

// A node as a policy sees it: GPU counts (capped as the placement routine's
// MachineState holds them), jobs on it, the given known speed; GPU type
// index and rack left 0 for the caller.
MachineView machine_view(const NodeInfo& n, double speed);

// A job as a policy sees it: user = uid, vc = account, job type from the
// job's "duet:...;type=" comment (job_hints.h), its GPU type as a bit of
// gpu_types (a type no node has: no machine may host it). user and type own
// the strings the view points into.
JobView job_view(const JobInfo& j, std::span<const std::string> gpu_types, std::string& user, std::string& type);

// Every job and every usable GPU node, with the strings the views point into;
// valid until the next build_views.
struct PolicyViews {
  std::vector<std::string> gpu_types, node_names, users, types;
  std::vector<MachineView> machines;
  std::vector<JobView> jobs;
  ClusterView cluster;
};
void build_views(std::span<const JobInfo> jobs, const ClusterInfo& c, PolicyViews& out);

}  // namespace duet::plugin
