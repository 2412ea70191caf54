// Ranker=model: duet's learned placement agent behind select/duet's seams,
// one object that is both the NodeRanker and the Observer:
//   rank     RWGP posterior (mean, sd of log speed vs expected) per node +
//            the placement head (plain C++, Eigen) + the speed prior
//            log(known speed) + mean (sd is the head's input only), as duet_policy's
//            placement does in the simulator; with JobTypeSpeedsFile, a job
//            whose comment names its type is ranked by that type's speeds;
//   observe  a finished job's measured vs expected run time on its nodes
//            updates the RWGP online;
//   save     the GP's window and long-term statistics by node name (text),
//            which select/duet keeps in StateSaveLocation.
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

#include "plugins/channel/agent_channel.h"
#include "plugins/seam/file_cksum.h"
#include "plugins/seam/job_hints.h"
#include "plugins/seam/placement_agent.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/model/model_file.h"
#include "policy/model/gavel.h"

namespace duet::plugin {
namespace {

constexpr double kClampLog = 2.0;  // |log(measured / expected)| kept below this

// The saved state: GP observations and long-term sums keyed by node name, so
// it survives node list changes (unknown names are dropped on restore).
struct SavedObs {
  std::string node;
  uint32_t slot;
  double value;
};
struct SavedSum {
  std::string node;
  uint32_t slot;
  double sum, count;
};
struct SavedState {
  std::vector<SavedObs> window;
  std::vector<SavedSum> sums;
};

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
    for (const NodeInfo& n : cluster.nodes) {
      const uint32_t free = n.gpus_total - std::min(n.gpus_alloc, n.gpus_total);
      views.push_back(MachineView{n.name, 0, static_cast<int>(std::min<uint32_t>(n.gpus_total, 65535)),
                                  static_cast<int>(std::min<uint32_t>(free, 65535)), 0,
                                  static_cast<float>(known_speed(n.name)),
                                  static_cast<int>(std::min<uint32_t>(n.jobs_running, 65535))});
    }
  }

  void connect(AgentChannel* channel) {
    channel_ = channel;
    published_.reset();
  }

  // (Re)builds the GP when the node list changes, carrying its state over by name.
  void set_cluster(const ClusterInfo& cluster) {
    last_cluster_ = cluster;  // observe() publishes the message from it
    std::vector<std::string> names;
    for (const NodeInfo& n : cluster.nodes) names.push_back(n.name);
    if (gp_ && names == names_) return;
    std::optional<SavedState> keep = pending_;
    if (gp_ && !keep) keep = capture();
    std::vector<learn::MachineDesc> d;
    for (const NodeInfo& n : cluster.nodes)
      d.push_back(learn::MachineDesc{
          n.name, n.gpu_type.empty() ? "?" : n.gpu_type, "", {std::log(std::max(1e-3, known_speed(n.name)))}});
    gp_ = std::make_unique<learn::PerformanceGp>(std::move(d), static_cast<uint32_t>(model_->job_types.size()),
                                                 model_->gp);
    names_ = std::move(names);
    pending_.reset();
    ++gp_changes_;
    if (keep) apply(*keep);
  }

  void observe(const JobOutcome& o) {
    if (!o.completed || !(o.run_s > 0)) return;
    const JobHints h = parse_job_hints(o.job.comment);
    if (!(h.ref_s > 0)) return;  // no expectation to compare with
    if (!gp_) return;            // set_cluster comes first (select/duet)
    // The speed the job was ranked by: its type's where the table knows it.
    node_types_.clear();
    for (const std::string& n : o.nodes) {
      auto it = std::find_if(last_cluster_.nodes.begin(), last_cluster_.nodes.end(),
                             [&](const NodeInfo& x) { return x.name == n; });
      node_types_.push_back(it != last_cluster_.nodes.end() ? it->gpu_type : std::string());
    }
    job_factors(o.job);
    double expected = 1e300;
    for (size_t i = 0; i < o.nodes.size(); ++i) expected = std::min(expected, known_speed(o.nodes[i]) * factor_[i]);
    if (!(expected > 0) || expected > 1e299) return;
    const double v = std::clamp(std::log(h.ref_s / o.run_s / expected), -kClampLog, kClampLog);
    const uint32_t t = job_type(o.job);
    for (const std::string& n : o.nodes) {
      auto it = std::find(names_.begin(), names_.end(), n);
      if (it != names_.end()) gp_->observe(learn::GpObservation{static_cast<uint32_t>(it - names_.begin()), t, v});
    }
    ++gp_changes_;
    if (last_cluster_.nodes.size() == names_.size()) publish_message(last_cluster_);
  }

  std::string save() const {
    const SavedState s = gp_ ? capture() : pending_.value_or(SavedState{});
    std::ostringstream out;
    out.precision(17);
    out << "model " << name_ << '\n';
    for (const SavedObs& o : s.window) out << "obs " << o.slot << ' ' << o.value << ' ' << o.node << '\n';
    for (const SavedSum& x : s.sums) out << "sum " << x.slot << ' ' << x.sum << ' ' << x.count << ' ' << x.node << '\n';
    return out.str();
  }

  bool restore(std::string_view bytes, std::string* error) {
    SavedState s;
    std::istringstream in{std::string(bytes)};
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (line.empty() || line.rfind("model ", 0) == 0) continue;  // another model's state still applies
      std::istringstream ls(line);
      std::string kind;
      ls >> kind;
      bool ok = false;
      if (kind == "obs") {
        SavedObs o;
        ok = static_cast<bool>(ls >> o.slot >> o.value >> o.node) && std::isfinite(o.value);
        if (ok) s.window.push_back(o);
      } else if (kind == "sum") {
        SavedSum x;
        ok = static_cast<bool>(ls >> x.slot >> x.sum >> x.count >> x.node) && std::isfinite(x.sum) && x.count >= 0;
        if (ok) s.sums.push_back(x);
      }
      if (!ok) {
        *error = "line " + std::to_string(lineno) + ": expected 'obs SLOT VALUE NODE' or 'sum SLOT SUM COUNT NODE'";
        return false;
      }
    }
    if (gp_)
      apply(s);
    else
      pending_ = std::move(s);
    return true;
  }

  std::string summary() const {
    const SavedState s = gp_ ? capture() : pending_.value_or(SavedState{});
    std::string out = std::to_string(s.window.size()) + " observations in the window";
    if (!gp_) return out + " (no node list yet)";
    // Posterior mean and sd of the pooled slot (what any job type sees
    // before its own observations), per node: equal states print equal.
    const uint32_t slot = gp_->num_job_types();
    for (size_t i = 0; i < names_.size(); ++i) {
      char buf[160];
      std::snprintf(buf, sizeof buf, " %s:mu=%.4f,sd=%.4f", names_[i].c_str(), gp_->mean(i, slot),
                    std::sqrt(std::max(0.0, gp_->var(i, slot))));
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

  SavedState capture() const {
    SavedState s;
    for (const learn::GpObservation& o : gp_->window()) s.window.push_back({names_[o.machine], o.job_type, o.value});
    const Eigen::MatrixXd& sum = gp_->long_term_sum();
    const Eigen::MatrixXd& cnt = gp_->long_term_count();
    for (Eigen::Index i = 0; i < cnt.rows(); ++i)
      for (Eigen::Index t = 0; t < cnt.cols(); ++t)
        if (cnt(i, t) > 0) s.sums.push_back({names_[i], static_cast<uint32_t>(t), sum(i, t), cnt(i, t)});
    return s;
  }

  void apply(const SavedState& s) {
    std::map<std::string, uint32_t> index;
    for (size_t i = 0; i < names_.size(); ++i) index[names_[i]] = static_cast<uint32_t>(i);
    const uint32_t slots = gp_->num_job_types() + 1;
    std::deque<learn::GpObservation> window;
    for (const SavedObs& o : s.window) {
      auto it = index.find(o.node);
      if (it != index.end()) window.push_back({it->second, std::min(o.slot, slots - 1), o.value});
    }
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(names_.size()), slots);
    Eigen::MatrixXd cnt = sum;
    for (const SavedSum& x : s.sums) {
      auto it = index.find(x.node);
      if (it == index.end()) continue;
      sum(it->second, std::min(x.slot, slots - 1)) += x.sum;
      cnt(it->second, std::min(x.slot, slots - 1)) += x.count;
    }
    gp_->restore(std::move(window), std::move(sum), std::move(cnt));
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
  std::vector<std::string> names_;     // the GP's machines, cluster order
  std::optional<SavedState> pending_;  // restored before the node list was known
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

PlacementAgent load_placement_agent(const std::string& path, const DuetConf& conf, std::string* error) {
  try {
    uint32_t crc = 0;
    if (!file_cksum(path, &crc, error)) return {};
    auto m = std::make_shared<const learn::Model>(learn::load_model(path));
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

const bool registered = (register_placement_model_loader(&load_placement_agent), true);

}  // namespace
}  // namespace duet::plugin
