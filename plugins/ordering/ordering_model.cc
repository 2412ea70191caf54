// Scorer=model: duet's learned ordering agent (policy/learn OrderingAgent, the
// squeeze-and-communicate network) behind the OrderScorer seam, for
// priority/duet and site_factor/duet.
//
// Features are policy/learn/agents/features.h's, computed from the same views the
// simulator builds: the plugin's JobInfo/ClusterInfo are turned into
// JobView/ClusterView by the seam (policy_views.h, as for the placement
// agent), and finished jobs feed the run-time history as in
// training. With Preemption=requeue a preemptive model is given the running
// jobs too (JobInfo::running and their service so far), as the simulator
// gives them. No Slurm and no LibTorch header here: OrderingAgent hides
// LibTorch (one intra-op thread) behind a pimpl. Nothing thrown escapes score().
//
// Messages (agent_channel.h), as in training (policy/learn/agents/duet_policy.cc):
// the placement agent's message, when select/duet published one of the
// model's width, goes into every scoring; a queue re-score publishes each
// job's message to the placement agent, keyed by job id.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "plugins/ordering/ordering_model.h"
#include "plugins/channel/agent_channel.h"
#include "plugins/seam/explain.h"
#include "plugins/seam/job_hints.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/policy_views.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/model/model_file.h"

namespace duet::plugin {
namespace {

class LearnedOrderScorer final : public OrderScorer {
 public:
  LearnedOrderScorer(const learn::Model& m, std::string name) : agent_(m), name_(std::move(name)) {}
  std::string name() const override { return name_; }

  bool score(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores,
             std::string* error) override {
    return run(jobs, cluster, scores, false, error);
  }

  bool score_queue(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores,
                   std::string* error) override {
    if (run(jobs, cluster, scores, true, error)) return true;
    if (channel_) channel_->clear_order_messages();
    return false;
  }

  void connect(AgentChannel* channel) override { channel_ = channel; }
  bool used_placement_message() const override { return used_pmsg_; }
  bool preemptive() const override { return agent_.config().ordering.preemptive != 0; }
  std::vector<double> learned_shares() const override { return shares_; }

  void on_finish(const JobInfo& job, double run_s) override {
    try {
      std::string user, type;
      history_.on_finish(job_view(job, {}, user, type), run_s);
    } catch (...) {
      // history is an optimisation; a failed update changes nothing else
    }
  }

 private:
  // Scores `jobs`; with `publish`, also hands each job's message to the
  // placement agent through the channel.
  bool run(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores, bool publish,
           std::string* error) {
    try {
      used_pmsg_ = false;
      shares_.clear();
      if (jobs.empty()) {
        if (publish && channel_) channel_->clear_order_messages();
        return true;
      }
      build_views(jobs, cluster, views_);
      const learn::ClusterSummary s = learn::summarise(views_.cluster);
      learn::job_feature_rows(views_.jobs, s, history_, rows_);
      learn::cluster_features(views_.cluster, views_.jobs, s, cl_);
      pmsg_.clear();
      if (channel_ && channel_->placement_message(pmsg_) && pmsg_.size() != agent_.config().placement.placement_message)
        pmsg_.clear();  // another model's message: zeros, as without one
      float gate = 0;   // a preemptive model's weight on its second prior, LAS or Gittins (running jobs among `jobs`
                        // when preempting)
      agent_.score_with_messages(rows_, jobs.size(), cl_, pmsg_, out_, msgs_, &gate);
      if (out_.size() != jobs.size()) {
        *error = "ordering agent returned " + std::to_string(out_.size()) + " scores";
        return false;
      }
      net_.assign(out_.begin(), out_.end());
      learn::add_model_order_prior(agent_.config(), rows_, out_, learn::kOrderPriorWeight, gate);  // as duet_policy.cc
      std::copy(out_.begin(), out_.end(), scores.begin());
      shares_.resize(out_.size());
      for (size_t i = 0; i < out_.size(); ++i) shares_[i] = learned_share(net_[i], out_[i]);
      if (publish && channel_) {
        ids_.clear();
        for (const JobInfo& j : jobs) ids_.push_back(j.job_id);
        channel_->publish_order_messages(ids_, msgs_, agent_.config().ordering.order_message);
      }
      used_pmsg_ = !pmsg_.empty();
      return true;
    } catch (const std::exception& e) { *error = std::string("ordering agent: ") + e.what(); } catch (...) {
      *error = "ordering agent: unknown exception";
    }
    return false;
  }

  learn::OrderingAgent agent_;
  std::string name_;
  learn::JobHistory history_;
  PolicyViews views_;
  std::vector<float> rows_, cl_, out_, pmsg_, msgs_, net_;
  std::vector<double> shares_;
  std::vector<uint32_t> ids_;
  AgentChannel* channel_ = nullptr;
  bool used_pmsg_ = false;
};

std::unique_ptr<OrderScorer> load_ordering_agent(const ModelFile& file, const DuetConf&, std::string* error) {
  try {
    const uint32_t crc = file.cksum;
    learn::Model m = learn::decode_model(file.bytes, file.path);  // checks magic, version, checksum, shapes
    m.check_inputs(learn::kJobFeatures, learn::kClusterFeatures, m.nets.placement.machine_features);
    return std::make_unique<LearnedOrderScorer>(
        m, "model(cksum " + std::to_string(crc) + ", format " + std::to_string(learn::model_version(m)) + ")");
  } catch (const std::exception& e) { *error = e.what(); } catch (...) {
    *error = "unknown exception while loading";
  }
  return nullptr;
}

}  // namespace

void register_ordering_agent() { register_order_model_loader(&load_ordering_agent); }

}  // namespace duet::plugin
