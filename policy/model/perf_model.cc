#include "policy/model/perf_model.h"

#include <algorithm>
#include <cmath>

namespace duet {

PerfModel::PerfModel(const ThroughputTable& table, const ClusterModel& cluster, const ModelOptions& opt)
    : table_(table), cluster_(cluster), opt_(opt), on_(cluster.machines.size()) {
  const size_t n = cluster.machines.size();
  speed_.assign(n, 1.0);
  x_.assign(n, 0.0);
  Rng table_rng(mix_seed(opt.seed, 0x6e6f726d616cULL /* "normal" */));
  for (double& z : normals_) z = table_rng.normal();
  const Variability& v = opt.variability;
  for (size_t m = 0; m < n; ++m) {
    Rng draw(mix_seed(opt.seed, 0x7370656564ULL /* "speed" */, m));
    double s = std::exp(v.speed_sigma * draw.normal());
    if (opt.ideal) continue;
    speed_[m] = std::clamp(s, 0.5, 1.5);
    x_[m] = v.ar_sigma * normal(0, m);
  }
}

double PerfModel::normal(uint64_t step, uint64_t m) const {
  return normals_[splitmix64(step_base(step) + m) & (kNormals - 1)];
}

uint64_t PerfModel::step_base(uint64_t step) const { return mix_seed(opt_.seed, 0x666c756374ULL /* "fluct" */, step); }

double PerfModel::known_speed(int m) const {
  return cluster_.gpu_types[cluster_.machines[m].type].mean_speed * speed_[m];
}

void PerfModel::advance_fluctuation() {
  if (opt_.ideal) return;
  const Variability& v = opt_.variability;
  const double innov = v.ar_sigma * std::sqrt(std::max(0.0, 1 - v.ar_phi * v.ar_phi));
  const uint64_t base = step_base(++step_);
  for (size_t m = 0; m < x_.size(); ++m)
    x_[m] = v.ar_phi * x_[m] + innov * normals_[splitmix64(base + m) & (kNormals - 1)];
}

void PerfModel::remove_job(int m, int jt) {
  auto& v = on_[m];
  auto it = std::find(v.begin(), v.end(), jt);
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
}

int PerfModel::table_gpu(int m) const {
  int g = cluster_.gpu_types[cluster_.machines[m].type].table_gpu;
  return g >= 0 ? g : table_.reference_gpu();
}

double PerfModel::type_speed(int jt, int m) const {
  const GpuType& t = cluster_.gpu_types[cluster_.machines[m].type];
  return t.table_gpu >= 0 ? table_.speed_ratio(jt, t.table_gpu) : t.flat_speed;
}

double PerfModel::rate(int jt, int gpus, std::span<const PlacementPart> parts) const {
  if (opt_.ideal) return 1.0;
  double r = 1e300;
  bool cross_rack = false;
  for (const PlacementPart& p : parts) {
    const int m = p.machine;
    double x = type_speed(jt, m) * speed_[m] * std::exp(x_[m]);
    bool self_seen = false;
    for (int k : on_[m]) {
      if (k == jt && !self_seen) {
        self_seen = true;
        continue;
      }  // this job itself
      x *= 1 - opt_.interference_beta * (1 - table_.colocation(jt, k, table_gpu(m)));
    }
    r = std::min(r, x);
    cross_rack |= cluster_.machines[m].rack != cluster_.machines[parts[0].machine].rack;
  }
  if (parts.size() > 1) {
    r *= table_.spread_factor(jt, ThroughputTable::scale_index(gpus), table_gpu(parts[0].machine));
    if (cross_rack) r *= opt_.cross_rack_factor;
  }
  return std::max(r, 1e-6);
}

}  // namespace duet
