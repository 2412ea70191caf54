#include "policy/baselines/ordering.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

namespace duet {

namespace {

// Sorts indices by key (ascending), ties by submit then id; only the first
// rank_limit when the caller set one (a partial sort: long queues stay cheap).
template <class Key>
void rank_by(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order, Key key) {
  order.resize(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> k(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) k[i] = key(jobs[i]);
  auto less = [&](size_t a, size_t b) {
    return std::tie(k[a], jobs[a].submit_s, jobs[a].id) < std::tie(k[b], jobs[b].submit_s, jobs[b].id);
  };
  if (c.rank_limit > 0 && c.rank_limit < order.size()) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(c.rank_limit), order.end(), less);
    order.resize(c.rank_limit);
  } else {
    std::sort(order.begin(), order.end(), less);
  }
}

class Fifo : public OrderingPolicy {
 public:
  std::string name() const override { return "fifo"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    rank_by(jobs, c, order, [](const JobView&) { return 0.0; });
  }
  bool blocking() const override { return true; }
  bool arrival_order() const override { return true; }
};

class SjfOracle : public OrderingPolicy {
 public:
  std::string name() const override { return "sjf-oracle"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    rank_by(jobs, c, order, [](const JobView& j) { return j.oracle_duration_s; });
  }
  bool oracle() const override { return true; }
};

class SrtfOracle : public OrderingPolicy {
 public:
  std::string name() const override { return "srtf-oracle"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    rank_by(jobs, c, order, [](const JobView& j) { return j.oracle_remaining_s; });
  }
  bool oracle() const override { return true; }
  bool preemptive() const override { return true; }
};

class Qssf : public OrderingPolicy {
 public:
  std::string name() const override { return "qssf"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    rank_by(jobs, c, order, [&](const JobView& j) { return predict(j) * j.gpus; });
  }
  void on_finish(const JobView& j, double run_s) override {
    std::string who(j.user.empty() ? j.vc : j.user);
    add(by_user_[who][j.gpus], run_s);
    add(by_user_[who][0], run_s);
    add(by_gpus_[j.gpus], run_s);
    add(all_, run_s);
  }
  // Predicted duration (seconds); public for tests.
  double predict(const JobView& j) const {
    std::string_view who = j.user.empty() ? j.vc : j.user;
    if (auto u = by_user_.find(who); u != by_user_.end()) {
      if (auto it = u->second.find(j.gpus); it != u->second.end()) return mean(it->second);
      return mean(u->second.at(0));
    }
    if (auto it = by_gpus_.find(j.gpus); it != by_gpus_.end()) return mean(it->second);
    return all_.second ? mean(all_) : 0.0;
  }

 private:
  using Acc = std::pair<double, int64_t>;
  static void add(Acc& a, double x) { a.first += x, a.second += 1; }
  static double mean(const Acc& a) { return a.first / static_cast<double>(a.second); }
  // user (vc when no user) -> GPU count -> durations; key 0 = any GPU count.
  std::map<std::string, std::map<int, Acc>, std::less<>> by_user_;
  std::map<int, Acc> by_gpus_;
  Acc all_{0, 0};
};

class Multifactor : public OrderingPolicy {
 public:
  std::string name() const override { return "multifactor"; }
  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    const double total = std::max(1, c.total_gpus);
    rank_by(jobs, c, order, [&](const JobView& j) {
      double age = std::min(1.0, std::max(0.0, c.now_s - j.submit_s) / (7 * 86400.0));
      double size = 1.0 - std::min(1.0, j.gpus / total);
      return -(1000.0 * age + 1000.0 * size);
    });
  }
};

}  // namespace

std::unique_ptr<OrderingPolicy> make_fifo() { return std::make_unique<Fifo>(); }
std::unique_ptr<OrderingPolicy> make_sjf_oracle() { return std::make_unique<SjfOracle>(); }
std::unique_ptr<OrderingPolicy> make_srtf_oracle() { return std::make_unique<SrtfOracle>(); }
std::unique_ptr<OrderingPolicy> make_qssf() { return std::make_unique<Qssf>(); }
std::unique_ptr<OrderingPolicy> make_multifactor() { return std::make_unique<Multifactor>(); }

}  // namespace duet
