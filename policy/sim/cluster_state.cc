#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/sim/sim_internal.h"

namespace duet::sim {

ClusterState::ClusterState(const ClusterModel& cluster, const ThroughputTable& table, const ModelOptions& opt)
    : cluster_(cluster), perf_(table, cluster, opt) {
  for (const auto& g : cluster_.gpu_types) type_names_.push_back(g.name);
  free_type_.assign(type_names_.size(), 0);
  on_.resize(cluster_.machines.size());
  for (size_t m = 0; m < cluster_.machines.size(); ++m) {
    const Machine& mc = cluster_.machines[m];
    MachineView v;
    v.name = mc.name;
    v.gpu_type = mc.type;
    v.total_gpus = v.free_gpus = mc.gpus;
    v.rack = mc.rack;
    v.speed = perf_.known_speed(static_cast<int>(m));
    machines_.push_back(v);
    free_type_[mc.type] += mc.gpus;
    free_total_ += mc.gpus;
  }
}

int ClusterState::usable_free(uint64_t mask) const {
  if (mask == 0) return free_total_;
  int n = 0;
  for (size_t t = 0; t < free_type_.size(); ++t)
    if ((mask >> t) & 1u) n += free_type_[t];
  return n;
}

void ClusterState::check_placement(const SimJob& j, const Placement& p, const std::string& who) const {
  int sum = 0;
  for (size_t a = 0; a < p.size(); ++a) {
    const PlacementPart& q = p[a];
    if (q.machine < 0 || q.machine >= static_cast<int>(machines_.size()) || q.gpus <= 0 ||
        q.gpus > machines_[q.machine].free_gpus || !(j.mask == 0 || (j.mask >> machines_[q.machine].gpu_type) & 1u))
      throw std::logic_error(fmt::format("policy {} gave an invalid placement for job {} (machine {}, {} GPUs)", who,
                                         j.spec->id, q.machine, q.gpus));
    for (size_t b = 0; b < a; ++b)
      if (p[b].machine == q.machine)
        throw std::logic_error(fmt::format("policy {} named machine {} twice for job {}", who, q.machine, j.spec->id));
    sum += q.gpus;
  }
  if (sum != j.gpus)
    throw std::logic_error(
        fmt::format("policy {} placed {} GPUs for job {} which needs {}", who, sum, j.spec->id, j.gpus));
}

void ClusterState::occupy(uint32_t i, const SimJob& j) {
  for (const PlacementPart& q : j.placement) {
    MachineView& mv = machines_[q.machine];
    mv.free_gpus -= q.gpus;
    mv.jobs += 1;
    free_type_[mv.gpu_type] -= q.gpus;
    free_total_ -= q.gpus;
    on_[q.machine].push_back(i);
    perf_.add_job(q.machine, j.jt);
  }
  busy_ += j.gpus;
}

void ClusterState::release(uint32_t i, const SimJob& j) {
  for (const PlacementPart& q : j.placement) {
    MachineView& mv = machines_[q.machine];
    mv.free_gpus += q.gpus;
    mv.jobs -= 1;
    free_type_[mv.gpu_type] += q.gpus;
    free_total_ += q.gpus;
    auto& v = on_[q.machine];
    v.erase(std::find(v.begin(), v.end(), i));
    perf_.remove_job(q.machine, j.jt);
  }
  busy_ -= j.gpus;
}

ClusterView ClusterState::view(double now) const {
  ClusterView c;
  c.now_s = now;
  c.gpu_types = type_names_;
  c.machines = machines_;
  c.total_gpus = cluster_.total_gpus;
  c.free_gpus = free_total_;
  return c;
}

}  // namespace duet::sim
