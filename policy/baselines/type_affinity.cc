#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "policy/baselines/heterogeneity.h"
#include "policy/baselines/placement.h"

namespace duet {

namespace {

class TypeAffinity : public PlacementPolicy, public PlacedSpeeds {
 public:
  explicit TypeAffinity(const ThroughputTable* table) : table_(table) {
    if (!table_) return;
    // Each table type's geometric mean over job types, as the cluster model
    // computes the mean speed a machine's known speed carries.
    for (size_t g = 0; g < table_->gpu_types().size(); ++g) {
      double lg = 0;
      for (int jt = 0; jt < table_->job_types(); ++jt)
        lg += std::log(std::max(1e-6, table_->speed_ratio(jt, static_cast<int>(g))));
      mean_.push_back(table_->job_types() ? std::exp(lg / table_->job_types()) : 1.0);
    }
  }
  std::string name() const override { return "type-affinity"; }

  std::optional<Placement> place(const JobView& job, const ClusterView& c) override {
    std::vector<double> speed(c.machines.size(), 0);
    affinity(job, c);
    for (size_t m = 0; m < c.machines.size(); ++m) speed[m] = c.machines[m].speed * affinity_[c.machines[m].gpu_type];
    int best = -1;
    for (size_t m = 0; m < c.machines.size(); ++m) {
      const MachineView& mv = c.machines[m];
      if (!type_allowed(job, mv) || mv.free_gpus < job.gpus) continue;
      if (best < 0 || speed[m] > speed[best] || (speed[m] == speed[best] && mv.free_gpus < c.machines[best].free_gpus))
        best = static_cast<int>(m);
    }
    std::optional<Placement> p;
    if (best >= 0) {
      p = Placement{{best, job.gpus}};
    } else {
      std::vector<int> order(c.machines.size());
      for (size_t m = 0; m < order.size(); ++m) order[m] = static_cast<int>(m);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return speed[a] > speed[b]; });
      p = spread_in_order(job, c, order);
    }
    if (p) {
      double s = 1e300;
      for (const PlacementPart& part : *p) s = std::min(s, speed[part.machine]);
      placed_[job.id] = s;
    }
    return p;
  }

  void on_finish(const JobView& job, double) override { placed_.erase(job.id); }
  double placed_speed(int64_t job) const override {
    auto it = placed_.find(job);
    return it == placed_.end() ? kUnknown : it->second;
  }

 private:
  // The job's speed on each cluster type relative to that type's mean.
  void affinity(const JobView& job, const ClusterView& c) {
    affinity_.assign(c.gpu_types.size(), 1.0);
    const int jt = table_ ? table_->find_job_type(job.job_type) : -1;
    if (jt < 0) return;
    for (size_t t = 0; t < c.gpu_types.size(); ++t) {
      const int g = table_->find_gpu(c.gpu_types[t]);
      if (g >= 0) affinity_[t] = std::max(1e-6, table_->speed_ratio(jt, g)) / mean_[g];
    }
  }

  const ThroughputTable* table_;
  std::vector<double> mean_, affinity_;
  std::unordered_map<int64_t, double> placed_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_type_affinity(const ThroughputTable* table) {
  return std::make_unique<TypeAffinity>(table);
}

}  // namespace duet
