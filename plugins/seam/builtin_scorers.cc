// Builtin ordering scorers: the age+size fallback and the small-first test hook.
#include <algorithm>

#include "plugins/seam/order_scorer.h"

namespace duet::plugin {
namespace {

class FallbackScorer final : public OrderScorer {
 public:
  explicit FallbackScorer(const DuetConf& c)
      : age_w_(c.fallback_age_weight), size_w_(c.fallback_size_weight), max_age_(std::max(1, c.fallback_max_age_s)) {}
  std::string name() const override { return "fallback(age+size)"; }
  bool score(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores,
             std::string*) override {
    double total = std::max(1u, cluster.total_gpus());
    for (size_t i = 0; i < jobs.size(); ++i) {
      double age = std::clamp(jobs[i].wait_s / max_age_, 0.0, 1.0);
      double size = 1.0 - std::min(1.0, jobs[i].gpus / total);
      scores[i] = age_w_ * age + size_w_ * size;
    }
    return true;
  }

 private:
  double age_w_, size_w_, max_age_;
};

class SmallFirstScorer final : public OrderScorer {
 public:
  std::string name() const override { return "small-first"; }
  bool score(std::span<const JobInfo> jobs, const ClusterInfo&, std::span<double> scores, std::string*) override {
    // GPUs dominate; waiting time (capped at ~11 days) only breaks ties.
    for (size_t i = 0; i < jobs.size(); ++i) scores[i] = -1e6 * jobs[i].gpus + std::min(jobs[i].wait_s, 999999.0);
    return true;
  }
};

}  // namespace

std::unique_ptr<OrderScorer> make_fallback_scorer(const DuetConf& conf) {
  return std::make_unique<FallbackScorer>(conf);
}

std::unique_ptr<OrderScorer> make_small_first_scorer() { return std::make_unique<SmallFirstScorer>(); }

}  // namespace duet::plugin
