#include "plugins/seam/policy_views.h"

#include <algorithm>
#include <cstdint>

#include "plugins/seam/job_hints.h"

namespace duet::plugin {
namespace {

int type_index(std::vector<std::string>& types, const std::string& t) {
  auto it = std::find(types.begin(), types.end(), t);
  if (it != types.end()) return static_cast<int>(it - types.begin());
  types.push_back(t);
  return static_cast<int>(types.size() - 1);
}

int capped(uint32_t n) { return static_cast<int>(std::min<uint32_t>(n, 65535)); }

}  // namespace

MachineView machine_view(const NodeInfo& n, double speed) {
  MachineView m;
  m.name = n.name;
  m.total_gpus = capped(n.gpus_total);
  m.free_gpus = capped(n.gpus_total - std::min(n.gpus_alloc, n.gpus_total));
  m.speed = speed;
  m.jobs = capped(n.jobs_running);
  return m;
}

JobView job_view(const JobInfo& j, std::span<const std::string> gpu_types, std::string& user, std::string& type) {
  JobView v;
  v.id = j.job_id;
  v.gpus = static_cast<int>(j.gpus);
  if (!j.gpu_type.empty()) {
    auto it = std::find(gpu_types.begin(), gpu_types.end(), j.gpu_type);
    // A type no node has: no machine may host it (bit 63 matches none here).
    v.type_mask =
        it != gpu_types.end() ? uint64_t{1} << std::min<size_t>(63, it - gpu_types.begin()) : uint64_t{1} << 63;
  }
  v.submit_s = static_cast<double>(j.submit_time);
  v.wait_s = j.wait_s;
  user = std::to_string(j.user_id);
  type = parse_job_hints(j.comment).type;
  v.user = user;
  v.vc = j.account;
  v.job_type = type;
  if (j.time_limit_s > 0) v.time_limit_s = j.time_limit_s;
  v.running = j.running;
  v.run_s = j.run_s;
  v.attained_gpu_s = j.attained_gpu_s;
  return v;
}

void build_views(std::span<const JobInfo> jobs, const ClusterInfo& c, PolicyViews& out) {
  out.gpu_types.clear();
  out.node_names.clear();
  out.machines.clear();
  for (const NodeInfo& n : c.nodes)
    if (n.gpus_total > 0 && n.usable) out.node_names.push_back(n.name);
  size_t k = 0;
  out.cluster = ClusterView{};
  for (const NodeInfo& n : c.nodes) {
    if (n.gpus_total == 0 || !n.usable) continue;
    MachineView m = machine_view(n, 1.0);
    m.name = out.node_names[k++];
    m.gpu_type = type_index(out.gpu_types, n.gpu_type.empty() ? "?" : n.gpu_type);
    out.cluster.total_gpus += m.total_gpus;
    out.cluster.free_gpus += m.free_gpus;
    out.machines.push_back(m);
  }
  out.users.assign(jobs.size(), {});
  out.types.assign(jobs.size(), {});
  out.jobs.clear();
  for (size_t i = 0; i < jobs.size(); ++i)
    out.jobs.push_back(job_view(jobs[i], out.gpu_types, out.users[i], out.types[i]));
  out.cluster.now_s = static_cast<double>(c.now);
  out.cluster.gpu_types = out.gpu_types;
  out.cluster.machines = out.machines;
}

}  // namespace duet::plugin
