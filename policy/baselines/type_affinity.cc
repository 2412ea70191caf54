#include <algorithm>
#include <unordered_map>
#include <vector>

#include "policy/baselines/heterogeneity.h"
#include "policy/baselines/placement.h"

namespace duet {

namespace {

class TypeAffinity : public PlacementPolicy, public PlacedSpeeds {
 public:
  explicit TypeAffinity(const ThroughputTable* table) {
    if (table) speeds_ = job_type_speeds(*table);
  }
  std::string name() const override { return "type-affinity"; }

  std::optional<Placement> place(const JobView& job, const ClusterView& c) override {
    std::vector<double> speed(c.machines.size(), 0);
    speeds_.factors(job.job_type, c.gpu_types, affinity_);
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
  JobTypeSpeeds speeds_;          // empty without a table: every factor 1
  std::vector<double> affinity_;  // the job's factor on each cluster type
  std::unordered_map<int64_t, double> placed_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_type_affinity(const ThroughputTable* table) {
  return std::make_unique<TypeAffinity>(table);
}

}  // namespace duet
