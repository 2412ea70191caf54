#include "policy/baselines/placement.h"

#include <algorithm>
#include <numeric>

#include "policy/baselines/heterogeneity.h"
#include "policy/util/rng.h"

namespace duet {

std::optional<Placement> spread_in_order(const JobView& job, const ClusterView& c, std::span<const int> order) {
  Placement p;
  int need = job.gpus;
  for (int m : order) {
    const MachineView& mv = c.machines[m];
    if (mv.free_gpus <= 0 || !type_allowed(job, mv)) continue;
    int take = std::min(need, mv.free_gpus);
    p.push_back({m, take});
    need -= take;
    if (need == 0) return p;
  }
  return std::nullopt;
}

namespace {

std::vector<int> identity(size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Machines by free GPUs, most first (for spreading with few machines).
std::vector<int> by_free_desc(const ClusterView& c) {
  std::vector<int> v = identity(c.machines.size());
  std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return c.machines[a].free_gpus > c.machines[b].free_gpus; });
  return v;
}

class FirstFit : public PlacementPolicy {
 public:
  std::string name() const override { return "first-fit"; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    const int n = static_cast<int>(c.machines.size());
    for (int m = 0; m < n; ++m) {
      const MachineView& mv = c.machines[m];
      if (mv.free_gpus >= j.gpus && type_allowed(j, mv)) return Placement{{m, j.gpus}};
    }
    if (order_.size() != c.machines.size()) order_ = identity(c.machines.size());
    return spread_in_order(j, c, order_);
  }

 private:
  std::vector<int> order_;
};

class BestFit : public PlacementPolicy {
 public:
  std::string name() const override { return "best-fit"; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    int best = -1;
    for (int m = 0; m < static_cast<int>(c.machines.size()); ++m) {
      const MachineView& mv = c.machines[m];
      if (mv.free_gpus >= j.gpus && type_allowed(j, mv) && (best < 0 || mv.free_gpus < c.machines[best].free_gpus)) {
        best = m;
        if (mv.free_gpus == j.gpus) break;
      }
    }
    if (best >= 0) return Placement{{best, j.gpus}};
    return spread_in_order(j, c, by_free_desc(c));
  }
};

class LeastLoaded : public PlacementPolicy {
 public:
  std::string name() const override { return "least-loaded"; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    int best = -1;
    for (int m = 0; m < static_cast<int>(c.machines.size()); ++m) {
      const MachineView& mv = c.machines[m];
      if (mv.free_gpus < j.gpus || !type_allowed(j, mv)) continue;
      if (best < 0 || mv.free_gpus > c.machines[best].free_gpus ||
          (mv.free_gpus == c.machines[best].free_gpus && mv.jobs < c.machines[best].jobs))
        best = m;
    }
    if (best >= 0) return Placement{{best, j.gpus}};
    return spread_in_order(j, c, by_free_desc(c));
  }
};

class RandomPlacement : public PlacementPolicy {
 public:
  explicit RandomPlacement(uint64_t seed) : rng_(mix_seed(seed, 0x72616e646f6dULL /* "random" */)) {}
  std::string name() const override { return "random"; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    fits_.clear();
    for (int m = 0; m < static_cast<int>(c.machines.size()); ++m)
      if (c.machines[m].free_gpus >= j.gpus && type_allowed(j, c.machines[m])) fits_.push_back(m);
    if (!fits_.empty()) return Placement{{fits_[rng_.below(fits_.size())], j.gpus}};
    std::vector<int> order = identity(c.machines.size());
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng_.below(i)]);
    return spread_in_order(j, c, order);
  }

 private:
  Rng rng_;
  std::vector<int> fits_;
};

class FastestFirst : public PlacementPolicy {
 public:
  std::string name() const override { return "fastest-first"; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    refresh(c);
    for (int m : order_) {
      const MachineView& mv = c.machines[m];
      if (mv.free_gpus >= j.gpus && type_allowed(j, mv)) return Placement{{m, j.gpus}};
    }
    return spread_in_order(j, c, order_);
  }

 private:
  // Known speeds rarely change: re-sort only when they do.
  void refresh(const ClusterView& c) {
    bool same = speeds_.size() == c.machines.size();
    for (size_t m = 0; same && m < speeds_.size(); ++m) same = speeds_[m] == c.machines[m].speed;
    if (same) return;
    speeds_.clear();
    for (const auto& mv : c.machines) speeds_.push_back(mv.speed);
    order_ = identity(c.machines.size());
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return speeds_[a] > speeds_[b]; });
  }
  std::vector<double> speeds_;
  std::vector<int> order_;
};

class Waiting : public PlacementPolicy {
 public:
  explicit Waiting(std::unique_ptr<PlacementPolicy> inner)
      : inner_(std::move(inner)), name_(inner_->name() + "-wait") {}
  std::string name() const override { return name_; }
  std::optional<Placement> place(const JobView& j, const ClusterView& c) override {
    auto allowed = [&](std::size_t m) { return type_allowed(j, c.machines[m]); };
    if (waits_for_one_machine(c.machines, j.gpus, allowed)) return std::nullopt;
    return inner_->place(j, c);
  }
  void on_finish(const JobView& j, double run_s) override { inner_->on_finish(j, run_s); }

 protected:
  std::unique_ptr<PlacementPolicy> inner_;

 private:
  std::string name_;
};

// For type-affinity-wait: gavel-las reads the speed its jobs were placed at.
class WaitingPlacedSpeeds : public Waiting, public PlacedSpeeds {
 public:
  WaitingPlacedSpeeds(std::unique_ptr<PlacementPolicy> inner, const PlacedSpeeds& speeds)
      : Waiting(std::move(inner)), speeds_(speeds) {}
  double placed_speed(int64_t job) const override { return speeds_.placed_speed(job); }

 private:
  const PlacedSpeeds& speeds_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> make_waiting(std::unique_ptr<PlacementPolicy> inner) {
  if (const auto* speeds = dynamic_cast<const PlacedSpeeds*>(inner.get()))
    return std::make_unique<WaitingPlacedSpeeds>(std::move(inner), *speeds);
  return std::make_unique<Waiting>(std::move(inner));
}

std::unique_ptr<PlacementPolicy> make_first_fit() { return std::make_unique<FirstFit>(); }
std::unique_ptr<PlacementPolicy> make_best_fit() { return std::make_unique<BestFit>(); }
std::unique_ptr<PlacementPolicy> make_least_loaded() { return std::make_unique<LeastLoaded>(); }
std::unique_ptr<PlacementPolicy> make_random_placement(uint64_t seed) {
  return std::make_unique<RandomPlacement>(seed);
}
std::unique_ptr<PlacementPolicy> make_fastest_first() { return std::make_unique<FastestFirst>(); }

}  // namespace duet
