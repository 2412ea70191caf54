#include "policy/learn/agents/duet_policy.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_map>

#include "policy/learn/agents/features.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/agents/restart_hold.h"
#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {
namespace {

void check_model(const Model& m) { m.check_inputs(kJobFeatures, kClusterFeatures, kPlacementFeatures); }

class DuetPlacement : public PlacementPolicy {
 public:
  DuetPlacement(std::shared_ptr<const Model> m, const DuetPolicyOptions& o)
      : model_(std::move(m)),
        head_((check_model(*model_), *model_)),
        opt_(o),
        prior_{o.prior_weight, o.risk_aversion, o.spread.value_or(model_->spread), o.speed_floor} {
    for (size_t i = 0; i < model_->job_types.size(); ++i) type_index_[model_->job_types[i]] = static_cast<uint32_t>(i);
    if (opt_.type_blind) opt_.job_speeds.reset();
  }
  std::string name() const override {
    if (opt_.spread) return std::string("duet-") + spread_sets_name(*opt_.spread) + "-sets";
    if (opt_.type_blind) return "duet-type-blind";
    if (!opt_.kernel || *opt_.kernel == model_->gp.kind) return "duet";
    return *opt_.kernel == KernelKind::rbf ? "duet-rbf" : *opt_.kernel == KernelKind::none ? "duet-nogp" : "duet-rw";
  }

  std::optional<Placement> place(const JobView& job, const ClusterView& c) override {
    if (job.gpus <= 0) return std::nullopt;
    ensure_gp(c);
    const PlacementJob pj{job_type(job.job_type), static_cast<uint16_t>(std::min(job.gpus, 65535))};
    auto m = order_msgs_.find(job.id);
    HeadScorer scorer(head_, m != order_msgs_.end() ? std::span<const float>(m->second) : std::span<const float>());
    const std::span<const MachineView> ms = job_machines(opt_.job_speeds.get(), job, c, factor_, view_);
    std::optional<Placement> p = place_job(*gp_, ms, job, pj, scorer, prior_, scores_);
    if (p) placed_[job.id] = Placed{*p, placement_speed(ms, *p)};
    return p;
  }

  // Summary of the cluster for the ordering agent: the head's message over
  // every machine's features for a generic 1-GPU job of unknown type.
  void placement_message(const ClusterView& c, std::vector<float>& out) {
    ensure_gp(c);
    all_.resize(c.machines.size());
    std::iota(all_.begin(), all_.end(), 0u);
    candidate_rows(*gp_, c.machines, all_, PlacementJob{static_cast<uint32_t>(model_->job_types.size()), 1}, -1,
                   states_, rows_);
    head_.message(rows_, all_.size(), out);
  }
  bool messages_fit(const NetConfig& o) const {
    return head_.order_message() == o.ordering.order_message &&
           head_.placement_message() == o.placement.placement_message;
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
    GpHyper hyper = model_->gp;
    if (opt_.kernel) hyper.kind = *opt_.kernel;
    gp_ = std::make_unique<PerformanceGp>(machine_descs(c), static_cast<uint32_t>(model_->job_types.size()), hyper);
    placed_.clear();
  }

  std::shared_ptr<const Model> model_;
  PlacementHead head_;
  DuetPolicyOptions opt_;
  std::unordered_map<std::string, uint32_t> type_index_;
  PriorWeights prior_;
  std::unique_ptr<PerformanceGp> gp_;
  std::unordered_map<int64_t, Placed> placed_;
  PlacementScores scores_;
  std::vector<uint32_t> all_;
  std::vector<double> factor_;  // job_machines' scratch
  std::vector<MachineView> view_;
  std::vector<MachineState> states_;
  std::vector<float> rows_;
  std::unordered_map<int64_t, std::vector<float>> order_msgs_;  // job id -> message, last pass
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
      agent_.score_with_messages(rows_, jobs.size(), cl_, pmsg_, scores_, msgs_, &gate_);
      peer_->set_order_messages(jobs, msgs_);
    } else {
      agent_.score(rows_, jobs.size(), cl_, {}, scores_, &gate_);
    }
    add_model_order_prior(agent_.config(), rows_, scores_, opt_.order_prior_weight, gate_);
    order.resize(jobs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    if (opt_.sample) {
      // Plackett-Luce sample: Gumbel-perturbed scores, sorted (same law as
      // drawing jobs one by one from the softmax without replacement).
      std::uniform_real_distribution<double> u(1e-12, 1.0);
      for (float& x : scores_) x = static_cast<float>(x / opt_.temperature - std::log(-std::log(u(rng_))));
    }
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores_[a] > scores_[b]; });
    if (preemptive()) hold_.apply(jobs, c, order);
  }
  void on_finish(const JobView& job, double run_s) override { history_.on_finish(job, run_s); }
  // A preemptive model ranks running jobs with pending ones (order_prior.h),
  // unless told not to preempt.
  bool preemptive() const override { return opt_.preemption && model_->nets.ordering.preemptive != 0; }
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
  RestartHold hold_;
  DuetPlacement* peer_ = nullptr;
  std::vector<float> rows_, cl_, scores_, pmsg_, msgs_;
  float gate_ = 0;
};

}  // namespace

std::unique_ptr<OrderingPolicy> make_duet_ordering(std::shared_ptr<const Model> m, const DuetPolicyOptions& o) {
  return std::make_unique<DuetOrdering>(std::move(m), o);
}
std::unique_ptr<PlacementPolicy> make_duet_placement(std::shared_ptr<const Model> m, const DuetPolicyOptions& o) {
  return std::make_unique<DuetPlacement>(std::move(m), o);
}

}  // namespace duet::learn
