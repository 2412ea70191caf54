#include "policy/baselines/dlas.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "policy/baselines/heterogeneity.h"

namespace duet {

namespace {

constexpr int kQueues = 3;

class Dlas : public OrderingPolicy {
 public:
  Dlas(bool gpu_time, double knob, bool effective = false) : gpu_time_(gpu_time), knob_(knob), effective_(effective) {}
  std::string name() const override { return effective_ ? "gavel-las" : gpu_time_ ? "tiresias-las" : "tiresias-dlas"; }
  void pair_with(PlacementPolicy& p) override {
    if (effective_) speeds_ = dynamic_cast<const PlacedSpeeds*>(&p);
  }
  bool preemptive() const override { return true; }
  double next_decision_s() const override { return wake_; }
  void on_finish(const JobView& j, double) override { jobs_.erase(j.id); }

  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    const double now = c.now_s;
    admit(jobs);
    std::vector<Job*> all = in_arrival_order();
    std::unordered_map<int64_t, size_t> present;
    for (size_t k = 0; k < jobs.size(); ++k) present[jobs[k].id] = k;
    for (Job* j : all) {
      auto it = present.find(j->id);
      if (it != present.end()) {
        advance(*j, jobs[it->second].run_s, jobs[it->second].wait_s);
      } else if (j->running) {  // left out of a pending-only call: still running
        advance(*j, j->run_s + (now - j->t), j->wait_s);
      } else {
        advance(*j, j->run_s, j->wait_s + (now - j->t));
      }
      j->t = now;
    }
    // Queue order, then the greedy start the simulator applies to it.
    std::sort(all.begin(), all.end(),
              [](const Job* a, const Job* b) { return std::tie(a->q, a->seq) < std::tie(b->q, b->seq); });
    order.clear();
    int budget = c.total_gpus;
    for (Job* j : all) {
      if (auto it = present.find(j->id); it != present.end()) order.push_back(it->second);
      j->running = j->gpus <= budget;
      if (j->running) budget -= j->gpus;
    }
    // Jobs left pending move behind the running ones of their queue.
    for (Job* j : all)
      if (!j->running) j->seq = ++seq_;
    wake_ = next_jump(all, now);
  }

 private:
  struct Job {
    int64_t id = 0;
    double submit = 0;
    int gpus = 0;
    int q = 0;
    uint64_t seq = 0;
    double executed = 0;      // run seconds since the job last entered Q0
    double last_pending = 0;  // pending seconds since then, once it has run
    double run_s = 0, wait_s = 0, t = 0;
    bool running = false;  // after the last decision
  };

  // New jobs join the end of Q0 in arrival order.
  void admit(std::span<const JobView> jobs) {
    std::vector<const JobView*> fresh;
    for (const JobView& v : jobs)
      if (!jobs_.count(v.id)) fresh.push_back(&v);
    std::sort(fresh.begin(), fresh.end(), [](const JobView* a, const JobView* b) {
      return std::tie(a->submit_s, a->id) < std::tie(b->submit_s, b->id);
    });
    for (const JobView* v : fresh) {
      Job& j = jobs_[v->id];
      j.id = v->id, j.submit = v->submit_s, j.gpus = v->gpus, j.seq = ++seq_;
      j.run_s = v->run_s, j.wait_s = v->wait_s, j.running = v->running, j.executed = v->run_s;
    }
  }

  std::vector<Job*> in_arrival_order() {
    std::vector<Job*> all;
    all.reserve(jobs_.size());
    for (auto& [id, j] : jobs_) all.push_back(&j);
    std::sort(all.begin(), all.end(),
              [](const Job* a, const Job* b) { return std::tie(a->submit, a->id) < std::tie(b->submit, b->id); });
    return all;
  }

  double service(const Job& j) const { return gpu_time_ ? j.executed * j.gpus : j.executed; }
  // Pending seconds after which a job is promoted (the simulator truncates).
  double starve_limit(const Job& j) const { return std::floor(j.executed * knob_); }

  // The simulator's update at a decision: demotion of a running job by one
  // queue, promotion of a starving pending one to Q0.
  void advance(Job& j, double run_s, double wait_s) {
    const double ran = run_s - j.run_s, waited = wait_s - j.wait_s;
    j.run_s = run_s, j.wait_s = wait_s;
    if (j.running) {
      j.executed += ran * speed(j);
      while (j.q < kQueues - 1 && service(j) >= kDlasQueueLimits[j.q]) ++j.q, j.seq = ++seq_;
    } else {
      if (j.executed > 0) j.last_pending += waited;
      if (knob_ > 0 && j.q > 0 && j.executed > 0 && j.last_pending >= starve_limit(j))
        j.executed = 0, j.last_pending = 0, j.q = 0, j.seq = ++seq_;
    }
  }

  double next_jump(const std::vector<Job*>& all, double now) const {
    double wake = kUnknown;
    auto at = [&](double t) {
      if (t > now && (wake == kUnknown || t < wake)) wake = t;
    };
    for (const Job* j : all) {
      if (j->running && j->q < kQueues - 1) {
        const double left = kDlasQueueLimits[j->q] - j->executed;
        if (effective_)  // the true crossing, not the simulator's formula below
          at(now + (kDlasQueueLimits[j->q] - service(*j)) / (j->gpus * speed(*j)));
        else
          at(now + (gpu_time_ ? std::ceil(left / j->gpus) : left));
      } else if (!j->running && knob_ > 0 && j->q > 0 && j->executed > 0) {
        at(now + starve_limit(*j) - j->last_pending);
      }
    }
    return wake;
  }

  // Effective service (gavel-las): seconds run count at the speed of the
  // placement the job holds (a placement changes only at a decision).
  double speed(const Job& j) const {
    const double s = speeds_ ? speeds_->placed_speed(j.id) : kUnknown;
    return s > 0 ? s : 1.0;
  }

  bool gpu_time_;
  double knob_;
  bool effective_;
  const PlacedSpeeds* speeds_ = nullptr;
  std::unordered_map<int64_t, Job> jobs_;
  uint64_t seq_ = 0;
  double wake_ = kUnknown;
};

}  // namespace

std::unique_ptr<OrderingPolicy> make_dlas(bool gpu_time, double promote_knob) {
  return std::make_unique<Dlas>(gpu_time, promote_knob);
}

std::unique_ptr<OrderingPolicy> make_gavel_las() { return std::make_unique<Dlas>(true, 0, true); }

}  // namespace duet
