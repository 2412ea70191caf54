#include "policy/baselines/gittins.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <tuple>
#include <unordered_map>

#include "policy/util/gittins_index.h"

namespace duet {

namespace {

// Log-duration statistics of finished jobs: per user, per VC, all; the most
// specific one with 2 samples, its spread shrunk towards 1.5 when few.
class History {
 public:
  void add(const JobView& j, double run_s) {
    const double x = std::log(std::max(run_s, 1.0));
    if (!j.user.empty()) user_[std::string(j.user)].add(x);
    if (!j.vc.empty()) vc_[std::string(j.vc)].add(x);
    all_.add(x);
  }
  std::pair<double, double> predict(const JobView& j) const {
    const Stat* s = nullptr;
    if (auto it = user_.find(std::string(j.user)); it != user_.end() && it->second.n >= 2) s = &it->second;
    if (!s)
      if (auto it = vc_.find(std::string(j.vc)); it != vc_.end() && it->second.n >= 2) s = &it->second;
    if (!s && all_.n >= 2) s = &all_;
    if (!s) return {3600, 1.5};
    const double var = s->m2 / (s->n - 1), w = s->n / (s->n + 2.0);
    return {std::exp(s->mean), std::sqrt(w * var + (1 - w) * 1.5 * 1.5)};
  }

 private:
  struct Stat {
    double n = 0, mean = 0, m2 = 0;
    void add(double x) {
      n += 1;
      const double d = x - mean;
      mean += d / n;
      m2 += d * (x - mean);
    }
  };
  std::unordered_map<std::string, Stat> user_, vc_;
  Stat all_;
};

class Gittins : public OrderingPolicy {
 public:
  std::string name() const override { return "gittins"; }
  bool preemptive() const override { return true; }
  void on_finish(const JobView& j, double run_s) override { history_.add(j, run_s); }
  void rank(std::span<const JobView> jobs, const ClusterView&, std::vector<size_t>& order) override {
    std::vector<double> k(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      const JobView& j = jobs[i];
      auto [median, sigma] = history_.predict(j);
      k[i] = gittins_rank_s(median, sigma, j.run_s) * std::max(1, j.gpus) * (j.running ? kGittinsRunningCredit : 1.0);
    }
    order.resize(jobs.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(k[a], jobs[a].submit_s, jobs[a].id) < std::tie(k[b], jobs[b].submit_s, jobs[b].id);
    });
  }

 private:
  History history_;
};

}  // namespace

std::unique_ptr<OrderingPolicy> make_gittins() { return std::make_unique<Gittins>(); }

}  // namespace duet
