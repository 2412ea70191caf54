// Ranker=model: duet's learned placement agent behind select/duet's seams,
// one object that is both the NodeRanker and the Observer:
//   rank     RWGP posterior (mean, sd of log speed vs expected) per node +
//            the placement head (plain C++, Eigen) + the speed prior
//            log(known speed) + mean (sd is the head's input only), as duet_policy's
//            placement does in the simulator; with JobTypeSpeedsFile, a job
//            whose comment names its type is ranked by that type's speeds;
//   observe  a finished job's run time, as slurmctld measured it, against
//            what the same user's same jobs took on other nodes
//            (run_history.h) moves its node's robust, per-user bounded
//            speed estimate (speed_estimates.h), which the RWGP reads;
//   save     the estimates, their recent moves and the run history by node
//            name (text), which select/duet keeps in StateSaveLocation.
//   message  connected to the agents' channel (agent_channel.h), ranks with
//            the ordering agent's message for the job (zeros without one)
//            and publishes its own message to the ordering agent: the head's
//            summary of all usable GPU nodes for a generic 1-GPU job of
//            unknown type, recomputed when the GP or the occupancy changed;
//            the same semantics as policy/learn/agents/duet_policy.cc in training.
// No Slurm and no LibTorch header here. select/duet serialises all calls.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "plugins/select/duet/placement_model.h"
#include "plugins/channel/agent_channel.h"
#include "plugins/seam/job_hints.h"
#include "plugins/seam/placement_agent.h"
#include "plugins/seam/policy_views.h"
#include "plugins/seam/run_history.h"
#include "plugins/seam/speed_estimates.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/model/model_file.h"
#include "policy/model/gavel.h"

namespace duet::plugin {
namespace {

// How the RWGP learns online here. The simulator's agent feeds the GP every
// job's measured speed; slurmctld must not: a user controls what their jobs
// do, and once wrote the expected run time itself (a comment's ref=), so that
// eight short jobs moved two nodes' GP means by more than 1 and steered
// everyone's jobs (issue 52). Instead the GP holds exactly one observation
// per node, always, in the slot of unknown job types: the node's robust
// estimate (speed_estimates.h; 0 until learned). With the observations' places
// fixed, the GP's posterior mean is A e for the estimates e, where
// A = K (K + noise I)^-1 is symmetric positive semi-definite with eigenvalues
// below 1, so |A_ij| < 1: no node's mean moves by more than the sum of what
// the estimates moved (and a job type's mean is rho times that). One user
// moves the estimates by at most SpeedLimits::user_total (0.20) in sum per
// hour, so also any node's GP mean. The GP's variance no longer shrinks with
// what was learned: every node's is that of one observation each.

// The agent; select/duet sees it through the two faces below.
class LearnedPlacement {
 public:
  LearnedPlacement(std::shared_ptr<const learn::Model> m, std::string name, std::map<std::string, double> speeds,
                   std::optional<JobTypeSpeeds> job_speeds)
      : model_(std::move(m)),
        head_(*model_),
        name_(std::move(name)),
        speeds_(std::move(speeds)),
        job_speeds_(std::move(job_speeds)) {
    for (size_t i = 0; i < model_->job_types.size(); ++i) type_index_[model_->job_types[i]] = static_cast<uint32_t>(i);
  }

  const std::string& name() const { return name_; }

  bool rank(const JobInfo& job, const ClusterInfo& cluster, std::vector<double>& preference, std::string* reason,
            std::string* error) {
    try {
      set_cluster(cluster);
      const learn::PlacementJob pj{job_type(job), static_cast<uint16_t>(std::clamp<uint32_t>(job.gpus, 1, 65535))};
      job_views(job, cluster);
      publish_message(cluster);
      omsg_.clear();
      if (channel_ && channel_->order_message(job.job_id, omsg_) && omsg_.size() != head_.order_message())
        omsg_.clear();  // another model's message: zeros, as without one
      // The placement routine's score step over every node (placement_routine.h);
      // cons_tres builds the machine set from the preference.
      learn::HeadScorer scorer(head_, omsg_);
      const learn::SpreadPlan plan = spread_plan(job, cluster, pj, scorer);
      scores_.machines.resize(views_.size());
      std::iota(scores_.machines.begin(), scores_.machines.end(), 0u);
      learn::score_candidates(*gp_, views_, pj, -1, scorer, plan.prior, scores_);
      preference.assign(cluster.nodes.size(), 0.0);
      double lowest = 0;
      for (size_t i = 0; i < cluster.nodes.size(); ++i) {
        preference[i] = scores_.learned[i] + scores_.prior[i];
        if (!std::isfinite(preference[i])) {
          *error = "non-finite score for " + cluster.nodes[i].name;
          return false;
        }
        lowest = i == 0 ? preference[i] : std::min(lowest, preference[i]);
      }
      below_speed_last(plan, preference, lowest);
      // Nodes without GPUs or unusable: last.
      for (size_t i = 0; i < cluster.nodes.size(); ++i)
        if (cluster.nodes[i].gpus_total == 0 || !cluster.nodes[i].usable) preference[i] = lowest - 1;
      if (reason) {
        // Best among the nodes of the job's GPU type: "best" names a node the job could use.
        size_t best = std::max_element(preference.begin(), preference.end()) - preference.begin();
        for (size_t i = 0; i < cluster.nodes.size(); ++i) {
          const NodeInfo& n = cluster.nodes[i];
          bool fits = n.gpus_total > 0 && (job.gpu_type.empty() || job.gpu_type == n.gpu_type);
          const NodeInfo& b = cluster.nodes[best];
          bool best_fits = b.gpus_total > 0 && (job.gpu_type.empty() || job.gpu_type == b.gpu_type);
          if (fits && (!best_fits || preference[i] > preference[best])) best = i;
        }
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s: best %s (%s speed %.3g, GP log-speed %+.3f +- %.3f%s)", name_.c_str(),
                      cluster.nodes[best].name.c_str(), typed_ ? "its type's" : "known", views_[best].speed,
                      scores_.rows[best * learn::kPlacementFeatures + learn::kGpMean],
                      scores_.rows[best * learn::kPlacementFeatures + learn::kGpSd],
                      omsg_.empty() ? "" : ", ordering agent's message used");
        *reason = buf;
      }
      return true;
    } catch (const std::exception& e) { *error = std::string("placement agent: ") + e.what(); } catch (...) {
      *error = "placement agent: unknown exception";
    }
    return false;
  }

  // The routine's consolidation over the nodes the job may use.
  bool one_node(const JobInfo& job, const ClusterInfo& cluster) {
    if (job.gpus == 0) return false;
    node_views(cluster, views_);
    return one_machine_could_hold(views_, static_cast<int>(std::min<uint32_t>(job.gpus, 65535)),
                                  [&](size_t i) { return may_use(job, cluster.nodes[i]); });
  }
  // The routine's speed floor (speed_floor_limit) over the candidate nodes
  // the job may use, by the job's own speeds: the one-machine floor for a job
  // one such node could hold alone, else the spread floor; none once the job
  // waited that floor's time, or where the fast nodes hold too few GPUs (the
  // limit is 0).
  void keep_off(const JobInfo& job, const ClusterInfo& cluster, const std::vector<bool>& candidate,
                std::vector<bool>& off) {
    off.assign(cluster.nodes.size(), false);
    if (job.gpus == 0 || candidate.size() != cluster.nodes.size()) return;
    job_views(job, cluster);
    const int gpus = static_cast<int>(std::min<uint32_t>(job.gpus, 65535));
    auto allowed = [&](size_t i) { return candidate[i] && may_use(job, cluster.nodes[i]); };
    const double limit = learn::speed_floor_limit(views_, gpus, job.wait_s, learn::kSpreadSpeedShare, allowed);
    for (size_t i = 0; i < views_.size(); ++i) off[i] = allowed(i) && views_[i].speed < limit;
  }
  static bool may_use(const JobInfo& job, const NodeInfo& n) {
    return n.usable && (job.gpu_type.empty() || n.gpu_type == job.gpu_type);
  }

  // A job no node can hold alone runs at its slowest node's speed
  // (policy/learn/agents/machine_set.h): the model's spread rule, planned as
  // the placement routine plans it (plan_spread). The nodes it leaves out go
  // after all others, in their order, so cons_tres falls back to them only if
  // it must; the node a learned plan starts from goes first. Reads views_ as
  // rank() just built them.
  learn::SpreadPlan spread_plan(const JobInfo& job, const ClusterInfo& cluster, const learn::PlacementJob& pj,
                                learn::HeadScorer& scorer) {
    learn::SpreadPlan plan;
    if (job.gpus == 0) return plan;
    const int gpus = static_cast<int>(std::min<uint32_t>(job.gpus, 65535));
    auto allowed = [&](size_t i) { return may_use(job, cluster.nodes[i]); };
    learn::placement_candidates(views_, allowed, cand_);
    learn::keep_to_speed_floor(views_, gpus, job.wait_s, learn::kSpreadSpeedShare, allowed, cand_);  // as keep_off
    const double floor = learn::fastest_floor(views_, gpus, cand_);
    if (!(floor > 0)) return plan;  // one node holds it, or none can
    learn::PriorWeights w;
    w.spread = model_->spread;
    scores_.machines = cand_;  // rank() scores every node afterwards
    return learn::plan_spread(*gp_, views_, floor, pj, scorer, w, scores_);
  }
  void below_speed_last(const learn::SpreadPlan& plan, std::vector<double>& preference, double& lowest) {
    if (plan.keep > 0) {
      const double shift = *std::max_element(preference.begin(), preference.end()) - lowest + 1;
      for (uint32_t i : cand_)
        if (views_[i].speed < plan.keep) {
          preference[i] -= shift;
          lowest = std::min(lowest, preference[i]);
        }
    }
    if (plan.first) preference[*plan.first] = *std::max_element(preference.begin(), preference.end()) + 1;
  }

  // views_ as `job` sees the nodes: each one's speed times the job type's
  // factor on its GPU type, as the routine's job_machines.
  void job_views(const JobInfo& job, const ClusterInfo& cluster) {
    node_views(cluster, views_);
    node_types_.clear();
    for (const NodeInfo& n : cluster.nodes) node_types_.push_back(n.gpu_type);
    job_factors(job);
    for (size_t i = 0; i < views_.size(); ++i) views_[i].speed *= factor_[i];
  }

  // The nodes as the placement routine sees them (known speed as a float,
  // GPU counts capped as MachineState holds them); no GPU type or rack index.
  void node_views(const ClusterInfo& cluster, std::vector<MachineView>& views) const {
    views.clear();
    for (const NodeInfo& n : cluster.nodes)
      views.push_back(machine_view(n, static_cast<float>(known_speed(n.name))));  // policy_views.h
  }

  void connect(AgentChannel* channel) {
    channel_ = channel;
    published_.reset();
  }

  // (Re)builds the GP when the node list changes: one observation per node
  // (see the top of this file). The estimates are kept by node name.
  void set_cluster(const ClusterInfo& cluster) {
    last_cluster_ = cluster;  // observe() publishes the message from it
    std::vector<std::string> names;
    for (const NodeInfo& n : cluster.nodes) names.push_back(n.name);
    if (gp_ && names == names_) return;
    std::vector<learn::MachineDesc> d;
    for (const NodeInfo& n : cluster.nodes)
      d.push_back(learn::MachineDesc{
          n.name, n.gpu_type.empty() ? "?" : n.gpu_type, "", {std::log(std::max(1e-3, known_speed(n.name)))}});
    learn::PerformanceGp::Options opt;
    opt.window = std::max(opt.window, d.size());
    const auto types = static_cast<uint32_t>(model_->job_types.size());
    auto gp = std::make_unique<learn::PerformanceGp>(std::move(d), types, model_->gp, opt);
    std::deque<learn::GpObservation> window;
    for (size_t i = 0; i < names.size(); ++i)
      window.push_back(learn::GpObservation{static_cast<uint32_t>(i), types, est_.estimate(names[i])});
    const Eigen::MatrixXd none = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(names.size()), types + 1);
    gp->restore(std::move(window), none, none);  // O(nodes^3), once per node list
    gp_ = std::move(gp);
    names_ = std::move(names);
    ++gp_changes_;
  }

  // Learns only from what slurmctld measured: a completed job on one node
  // (on several, it ran at the slowest one's pace and says nothing sure of
  // the others), its run time against its work as measured on other nodes.
  // The comment's ref= and type= are the user's claims and play no part.
  void observe(const JobOutcome& o) {
    if (!o.completed || !(o.run_s > 0) || o.nodes.size() != 1) return;
    if (!gp_) return;  // set_cluster comes first (select/duet)
    const std::string& node = o.nodes.front();
    if (std::find(names_.begin(), names_.end(), node) == names_.end()) return;
    const RunKey key = run_key(o.job.user_id, o.job.gpus, o.job.name);
    const std::optional<double> work = history_.expected_work(
        key, node, [this](std::string_view n) { return known_speed(std::string(n)) * std::exp(est_.estimate(n)); });
    history_.record(key, node, o.run_s, o.end);
    if (!work) return;  // no expectation yet: this run is one for the next
    const double v = std::log(*work / (o.run_s * known_speed(node)));
    if (est_.add(SpeedSample{node, o.job.user_id, v, o.end}) != SpeedVerdict::kMoved) return;
    feed_gp();
    if (last_cluster_.nodes.size() == names_.size()) publish_message(last_cluster_);
  }

  std::string save() const {
    std::ostringstream out;
    out << "model " << name_ << '\n';
    est_.save(out);
    history_.save(out);
    return out.str();
  }

  // Lines 'obs' and 'sum' (the GP's window and sums of duet before issue 52)
  // were learned from run times users claimed: dropped.
  bool restore(std::string_view bytes, std::string* error) {
    SpeedEstimates est(est_.limits());
    RunHistory history;
    std::istringstream in{std::string(bytes)};
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty() || line.rfind("model ", 0) == 0) continue;  // another model's state still applies
      if (line.rfind("obs ", 0) == 0 || line.rfind("sum ", 0) == 0) continue;
      if (est.restore_line(line) || history.restore_line(line)) continue;
      *error = "line " + std::to_string(lineno) +
               ": expected 'est NODE VALUE', 'move TIME USER AMOUNT NODE' or 'run USER GPUS NAMEHASH TIME SECONDS "
               "NODE'";
      return false;
    }
    est_ = std::move(est);
    history_ = std::move(history);
    feed_gp();
    return true;
  }

  std::string summary() const {
    std::string out = std::to_string(history_.runs()) + " runs measured, " + std::to_string(est_.recent_moves()) +
                      " moves in the last hour";
    if (!gp_) return out + " (no node list yet)";
    // Per node: its robust estimate, and the GP's posterior mean and sd in
    // the pooled slot (what a job of unknown type sees): equal states print equal.
    const uint32_t slot = gp_->num_job_types();
    for (size_t i = 0; i < names_.size(); ++i) {
      char buf[200];
      std::snprintf(buf, sizeof buf, " %s:est=%.4f,mu=%.4f,sd=%.4f", names_[i].c_str(), est_.estimate(names_[i]),
                    gp_->mean(i, slot), std::sqrt(std::max(0.0, gp_->var(i, slot))));
      out += buf;
    }
    return out;
  }

 private:
  uint32_t job_type(const JobInfo& j) const {
    auto it = type_index_.find(parse_job_hints(j.comment).type);
    return it != type_index_.end() ? it->second : static_cast<uint32_t>(model_->job_types.size());
  }
  // factor_[i]: the job's type's speed on GPU type node_types_[i] over that
  // type's mean (1 without JobTypeSpeedsFile, for a job that names no known
  // type, or a GPU type the table lacks); typed_: some factor applies.
  void job_factors(const JobInfo& job) {
    typed_ = job_speeds_ && job_speeds_->factors(parse_job_hints(job.comment).type, node_types_, factor_);
    if (!typed_) factor_.assign(node_types_.size(), 1.0);
  }
  double known_speed(const std::string& node) const {
    auto it = speeds_.find(node);
    return it != speeds_.end() ? it->second : 1.0;
  }

  // The GP's observations (one per node, names_ order) to the estimates.
  void feed_gp() {
    if (!gp_) return;
    values_.resize(names_.size());
    for (size_t i = 0; i < names_.size(); ++i) values_[i] = est_.estimate(names_[i]);
    gp_->set_values(values_);
    ++gp_changes_;
  }

  // The message to the ordering agent, from the GP's current posterior and
  // the usable GPU nodes' state (locality 0), for a 1-GPU job of unknown
  // type; published when the GP or those states changed since the last one.
  // Needs gp_ built for this cluster (set_cluster first).
  void publish_message(const ClusterInfo& cluster) {
    if (!channel_ || !gp_) return;
    node_views(cluster, msg_views_);
    msg_nodes_.clear();
    for (size_t i = 0; i < cluster.nodes.size(); ++i)
      if (cluster.nodes[i].gpus_total != 0 && cluster.nodes[i].usable) msg_nodes_.push_back(static_cast<uint32_t>(i));
    learn::machine_states(msg_views_, msg_nodes_, -1, msg_states_);
    if (published_ && published_->gp_changes == gp_changes_ && same_states(published_->states, msg_states_)) return;
    const learn::PlacementJob generic{static_cast<uint32_t>(model_->job_types.size()), 1};
    learn::placement_features(*gp_, generic, msg_states_, msg_rows_);
    if (msg_states_.empty())
      msg_.clear();  // no usable GPU node: no message (zeros)
    else
      head_.message(msg_rows_, msg_states_.size(), msg_);
    channel_->publish_placement_message(msg_);
    published_ = Published{gp_changes_, msg_states_};
  }

  static bool same_states(const std::vector<learn::MachineState>& a, const std::vector<learn::MachineState>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const learn::MachineState& x, const learn::MachineState& y) {
                        return x.machine == y.machine && x.free_gpus == y.free_gpus && x.total_gpus == y.total_gpus &&
                               x.colocated_jobs == y.colocated_jobs && x.rel_speed == y.rel_speed;
                      });
  }

  std::shared_ptr<const learn::Model> model_;
  learn::PlacementHead head_;
  std::string name_;
  std::map<std::string, double> speeds_;  // known speed per node (NodeSpeedsFile), else 1
  std::optional<JobTypeSpeeds> job_speeds_;  // JobTypeSpeedsFile's
  std::vector<std::string> node_types_;      // job_factors' input: the nodes' GPU types
  std::vector<double> factor_;
  bool typed_ = false;
  std::map<std::string, uint32_t> type_index_;
  std::unique_ptr<learn::PerformanceGp> gp_;
  std::vector<std::string> names_;  // the GP's machines, cluster order
  SpeedEstimates est_;              // what was learned, by node name
  RunHistory history_;              // slurmctld's measured runs
  std::vector<double> values_;      // feed_gp's
  std::vector<MachineView> views_;     // the nodes; rebuilt by every rank()
  std::vector<uint32_t> cand_;
  learn::PlacementScores scores_;
  // the agents' messages
  struct Published {
    uint64_t gp_changes;
    std::vector<learn::MachineState> states;
  };
  AgentChannel* channel_ = nullptr;
  uint64_t gp_changes_ = 0;             // bumped whenever the GP's posterior may change
  std::optional<Published> published_;  // what the last published message was computed from
  ClusterInfo last_cluster_;
  std::vector<MachineView> msg_views_;
  std::vector<uint32_t> msg_nodes_;  // usable GPU nodes
  std::vector<learn::MachineState> msg_states_;
  std::vector<float> msg_rows_, msg_, omsg_;
};

class RankerFace final : public NodeRanker {
 public:
  explicit RankerFace(std::shared_ptr<LearnedPlacement> a) : a_(std::move(a)) {}
  std::string name() const override { return a_->name(); }
  bool rank(const JobInfo& job, const ClusterInfo& cluster, std::vector<double>& preference, std::string* reason,
            std::string* error) override {
    return a_->rank(job, cluster, preference, reason, error);
  }
  void connect(AgentChannel* channel) override { a_->connect(channel); }
  bool one_node(const JobInfo& job, const ClusterInfo& cluster) override { return a_->one_node(job, cluster); }
  void keep_off(const JobInfo& job, const ClusterInfo& cluster, const std::vector<bool>& candidate,
                std::vector<bool>& off) override {
    a_->keep_off(job, cluster, candidate, off);
  }

 private:
  std::shared_ptr<LearnedPlacement> a_;
};

// Named "rwgp", not after the model file: the observations are data about
// the nodes and stay valid when a new model file is installed.
class ObserverFace final : public Observer {
 public:
  explicit ObserverFace(std::shared_ptr<LearnedPlacement> a) : a_(std::move(a)) {}
  std::string name() const override { return "rwgp"; }
  void set_cluster(const ClusterInfo& cluster) override { a_->set_cluster(cluster); }
  void observe(const JobOutcome& o) override { a_->observe(o); }
  std::string save() const override { return a_->save(); }
  bool restore(std::string_view bytes, std::string* error) override { return a_->restore(bytes, error); }
  std::string summary() const override { return a_->summary(); }

 private:
  std::shared_ptr<LearnedPlacement> a_;
};

PlacementAgent load_placement_agent(const ModelFile& file, const DuetConf& conf, std::string* error) {
  try {
    const uint32_t crc = file.cksum;
    auto m = std::make_shared<const learn::Model>(learn::decode_model(file.bytes, file.path));
    m->check_inputs(m->nets.ordering.job_features, m->nets.ordering.cluster_features, learn::kPlacementFeatures);
    std::map<std::string, double> speeds;
    if (!conf.node_speeds_file.empty() && !read_node_speeds(conf.node_speeds_file, &speeds, error)) {
      *error = "NodeSpeedsFile " + *error;
      return {};
    }
    std::optional<JobTypeSpeeds> job_speeds;
    if (!conf.job_type_speeds_file.empty()) {
      try {
        job_speeds = job_type_speeds(read_gavel(conf.job_type_speeds_file));
      } catch (const std::exception& e) {
        *error = std::string("JobTypeSpeedsFile ") + e.what();
        return {};
      }
    }
    auto agent = std::make_shared<LearnedPlacement>(
        m, "model(cksum " + std::to_string(crc) + ", format " + std::to_string(learn::model_version(*m)) + ")",
        std::move(speeds), std::move(job_speeds));
    return PlacementAgent{std::make_shared<RankerFace>(agent), std::make_shared<ObserverFace>(agent)};
  } catch (const std::exception& e) { *error = e.what(); } catch (...) {
    *error = "unknown exception while loading";
  }
  return {};
}

}  // namespace

void register_placement_agent() { register_placement_model_loader(&load_placement_agent); }

}  // namespace duet::plugin
