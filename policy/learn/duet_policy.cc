#include "policy/learn/duet_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "policy/learn/features.h"
#include "policy/learn/machine_set.h"
#include "policy/learn/ordering_agent.h"
#include "policy/learn/performance_gp.h"
#include "policy/learn/placement_features.h"
#include "policy/learn/placement_head.h"

namespace duet::learn {
namespace {

void check_model(const Model& m) {
  m.check_inputs(kJobFeatures, kClusterFeatures, kPlacementFeatures);
}

class DuetPlacement : public PlacementPolicy {
 public:
  DuetPlacement(std::shared_ptr<const Model> m, const DuetPolicyOptions& o)
      : model_(std::move(m)), head_((check_model(*model_), *model_)), opt_(o) {
    for (size_t i = 0; i < model_->job_types.size(); ++i) type_index_[model_->job_types[i]] = static_cast<uint32_t>(i);
  }
  std::string name() const override {
    if (!opt_.kernel || *opt_.kernel == model_->gp.kind) return "duet";
    return *opt_.kernel == KernelKind::rbf ? "duet-rbf" : *opt_.kernel == KernelKind::none ? "duet-nogp" : "duet-rw";
  }

  std::optional<Placement> place(const JobView& job, const ClusterView& c) override {
    if (job.gpus <= 0) return std::nullopt;
    ensure_gp(c);
    cand_.clear();
    int free_allowed = 0;
    for (size_t i = 0; i < c.machines.size(); ++i) {
      const MachineView& mv = c.machines[i];
      if (mv.free_gpus <= 0 || !type_allowed(job, mv)) continue;
      cand_.push_back(static_cast<uint32_t>(i));
      free_allowed += mv.free_gpus;
    }
    if (free_allowed < job.gpus) return std::nullopt;
    keep_fastest_floor(c.machines, job.gpus, cand_);  // a machine set only from the fastest
    const PlacementJob pj{job_type(job.job_type), static_cast<uint16_t>(std::min(job.gpus, 65535))};
    auto m = order_msgs_.find(job.id);
    msg_ = m != order_msgs_.end() ? std::span<const float>(m->second) : std::span<const float>();
    score(c, pj, -1);
    // One machine if any can hold the whole job: the best-scored of those.
    int best = -1;
    for (size_t k = 0; k < cand_.size(); ++k)
      if (c.machines[cand_[k]].free_gpus >= job.gpus && (best < 0 || total_[k] > total_[best])) best = static_cast<int>(k);
    Placement p;
    if (best >= 0) {
      p.push_back({static_cast<int>(cand_[best]), job.gpus});
    } else {
      // Greedy machine set: the best machine first, then the rest re-scored
      // with locality to it (same rack), taken in score order.
      best = static_cast<int>(std::max_element(total_.begin(), total_.end()) - total_.begin());
      const uint32_t first = cand_[best];
      score(c, pj, c.machines[first].rack);
      std::vector<size_t> ord(cand_.size());
      std::iota(ord.begin(), ord.end(), size_t{0});
      std::stable_sort(ord.begin(), ord.end(), [&](size_t a, size_t b) {
        if ((cand_[a] == first) != (cand_[b] == first)) return cand_[a] == first;
        return total_[a] > total_[b];
      });
      int need = job.gpus;
      for (size_t k : ord) {
        const int take = std::min(need, c.machines[cand_[k]].free_gpus);
        p.push_back({static_cast<int>(cand_[k]), take});
        need -= take;
        if (need == 0) break;
      }
    }
    double expected = 1e300;
    for (const PlacementPart& part : p) expected = std::min(expected, c.machines[part.machine].speed);
    placed_[job.id] = Placed{p, expected};
    return p;
  }

  // Summary of the cluster for the ordering agent: the head's message over
  // every machine's features for a generic 1-GPU job of unknown type.
  void placement_message(const ClusterView& c, std::vector<float>& out) {
    ensure_gp(c);
    cand_.resize(c.machines.size());
    std::iota(cand_.begin(), cand_.end(), 0u);
    machine_states(c, -1);
    placement_features(*gp_, PlacementJob{static_cast<uint32_t>(model_->job_types.size()), 1}, states_, rows_);
    head_.message(rows_, cand_.size(), out);
  }
  bool messages_fit(const NetConfig& o) const {
    return head_.order_message() == o.ordering.order_message && head_.placement_message() == o.placement.placement_message;
  }
  void set_order_messages(std::span<const JobView> jobs, const std::vector<float>& msgs) {
    const size_t w = head_.order_message();
    if (msgs.size() != jobs.size() * w) return;
    order_msgs_.clear();
    for (size_t i = 0; i < jobs.size(); ++i)
      order_msgs_[jobs[i].id].assign(msgs.begin() + static_cast<std::ptrdiff_t>(i * w),
                                     msgs.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  }

  void on_finish(const JobView& job, double run_s) override {
    auto it = placed_.find(job.id);
    if (it == placed_.end()) return;
    const Placed pl = std::move(it->second);
    placed_.erase(it);
    // Measured speed needs the job's reference duration (simulator only) and
    // a single uninterrupted run on the recorded machines.
    if (!gp_ || !(job.oracle_duration_s > 0) || !(run_s > 0) || !(pl.expected > 0)) return;
    if (std::abs(job.run_s - run_s) > 1e-6 * std::max(1.0, run_s)) return;
    const double v = std::clamp(std::log(job.oracle_duration_s / run_s / pl.expected), -2.0, 2.0);
    const uint32_t t = job_type(job.job_type);
    for (const PlacementPart& part : pl.where)
      if (static_cast<size_t>(part.machine) < gp_->num_machines())
        gp_->observe(GpObservation{static_cast<uint32_t>(part.machine), t, v});
  }

 private:
  struct Placed {
    Placement where;
    double expected = 1;
  };

  uint32_t job_type(std::string_view name) const {
    auto it = type_index_.find(std::string(name));
    return it != type_index_.end() ? it->second : static_cast<uint32_t>(model_->job_types.size());
  }

  // (Re)builds the GP when the cluster's machine list changes.
  void ensure_gp(const ClusterView& c) {
    if (gp_ && gp_->num_machines() == c.machines.size()) return;
    std::vector<MachineDesc> d;
    d.reserve(c.machines.size());
    for (const MachineView& m : c.machines) {
      const std::string type = m.gpu_type >= 0 && static_cast<size_t>(m.gpu_type) < c.gpu_types.size()
                                   ? c.gpu_types[m.gpu_type]
                                   : std::string("?");
      d.push_back(MachineDesc{std::string(m.name), type, "r" + std::to_string(m.rack),
                              {std::log(std::max(1e-3, m.speed))}});
    }
    GpHyper hyper = model_->gp;
    if (opt_.kernel) hyper.kind = *opt_.kernel;
    gp_ = std::make_unique<PerformanceGp>(std::move(d), static_cast<uint32_t>(model_->job_types.size()), hyper);
    placed_.clear();
  }

  // total_[k]: head score + risk-aware prior for candidate k. rack >= 0:
  // locality 1 for machines on that rack.
  void score(const ClusterView& c, const PlacementJob& pj, int rack) {
    machine_states(c, rack);
    placement_features(*gp_, pj, states_, rows_);
    head_.score(rows_, cand_.size(), msg_, total_);
    for (size_t k = 0; k < cand_.size(); ++k) {
      total_[k] += static_cast<float>(
          placement_prior(rows_.data() + k * kPlacementFeatures, opt_.prior_weight, opt_.risk_aversion));
    }
  }

  // states_[k] for candidate cand_[k]; locality 1 on `rack` (>= 0).
  void machine_states(const ClusterView& c, int rack) {
    states_.resize(cand_.size());
    for (size_t k = 0; k < cand_.size(); ++k) {
      const MachineView& mv = c.machines[cand_[k]];
      states_[k] = MachineState{cand_[k], static_cast<uint16_t>(std::clamp(mv.free_gpus, 0, 65535)),
                                static_cast<uint16_t>(std::clamp(mv.total_gpus, 1, 65535)),
                                static_cast<uint16_t>(std::clamp(mv.jobs, 0, 65535)),
                                static_cast<float>(mv.speed), rack >= 0 && mv.rack == rack ? 1.f : 0.f};
    }
  }

  std::shared_ptr<const Model> model_;
  PlacementHead head_;
  DuetPolicyOptions opt_;
  std::unordered_map<std::string, uint32_t> type_index_;
  std::unique_ptr<PerformanceGp> gp_;
  std::unordered_map<int64_t, Placed> placed_;
  std::vector<uint32_t> cand_;
  std::vector<MachineState> states_;
  std::vector<float> rows_, total_;
  std::unordered_map<int64_t, std::vector<float>> order_msgs_;  // job id -> message, last pass
  std::span<const float> msg_;                                   // the job being placed
};

// The messages the two agents exchange when they work together (both "duet"):
// placement -> ordering, the placement head's summary of the cluster
// (PlacementHead::message); ordering -> placement, one vector per job from
// the same scoring pass. Without a peer both are zeros.
class DuetOrdering : public OrderingPolicy {
 public:
  DuetOrdering(std::shared_ptr<const Model> m, const DuetPolicyOptions& o)
      : model_(std::move(m)), agent_((check_model(*model_), *model_)), opt_(o), rng_(o.seed) {}
  std::string name() const override { return "duet"; }

  void rank(std::span<const JobView> jobs, const ClusterView& c, std::vector<size_t>& order) override {
    order.clear();
    if (jobs.empty()) return;
    const ClusterSummary s = summarise(c);
    job_feature_rows(jobs, s, history_, rows_);
    cluster_features(c, jobs, s, cl_);
    if (peer_ && opt_.messages) {
      peer_->placement_message(c, pmsg_);
      agent_.score_with_messages(rows_, jobs.size(), cl_, pmsg_, scores_, msgs_);
      peer_->set_order_messages(jobs, msgs_);
    } else {
      agent_.score(rows_, jobs.size(), cl_, {}, scores_);
    }
    add_order_prior(rows_, scores_, opt_.order_prior_weight);
    order.resize(jobs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (opt_.sample) {
      // Plackett-Luce sample: Gumbel-perturbed scores, sorted (same law as
      // drawing jobs one by one from the softmax without replacement).
      std::uniform_real_distribution<double> u(1e-12, 1.0);
      for (float& x : scores_) x = static_cast<float>(x / opt_.temperature - std::log(-std::log(u(rng_))));
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores_[a] > scores_[b]; });
  }
  void on_finish(const JobView& job, double run_s) override { history_.on_finish(job, run_s); }
  void pair_with(PlacementPolicy& p) override {
    peer_ = dynamic_cast<DuetPlacement*>(&p);
    if (peer_ && !peer_->messages_fit(agent_.config())) peer_ = nullptr;  // another model's shapes
  }

 private:
  std::shared_ptr<const Model> model_;
  OrderingAgent agent_;
  DuetPolicyOptions opt_;
  std::mt19937_64 rng_;
  JobHistory history_;
  DuetPlacement* peer_ = nullptr;
  std::vector<float> rows_, cl_, scores_, pmsg_, msgs_;
};

}  // namespace

std::unique_ptr<OrderingPolicy> make_duet_ordering(std::shared_ptr<const Model> m, const DuetPolicyOptions& o) {
  return std::make_unique<DuetOrdering>(std::move(m), o);
}
std::unique_ptr<PlacementPolicy> make_duet_placement(std::shared_ptr<const Model> m, const DuetPolicyOptions& o) {
  return std::make_unique<DuetPlacement>(std::move(m), o);
}

}  // namespace duet::learn
