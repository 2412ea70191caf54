// Scorer=model: duet's learned ordering agent (policy/learn OrderingAgent, the
// squeeze-and-communicate network) behind the OrderScorer seam, for
// priority/duet and site_factor/duet.
//
// Features are policy/learn/agents/features.h's, computed from the same views the
// simulator builds: the plugin's JobInfo/ClusterInfo are turned into
// JobView/ClusterView here (user = uid, vc = account, job type from the job's
// "duet:...;type=" comment), and finished jobs feed the run-time history as in
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
#include "plugins/seam/job_hints.h"
#include "plugins/seam/order_scorer.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/model/model_file.h"

namespace duet::plugin {
namespace {

// Owns the strings the JobView/ClusterView string_views point into.
struct PolicyViews {
  std::vector<std::string> gpu_types, node_names, users, types;
  std::vector<MachineView> machines;
  std::vector<JobView> jobs;
  ClusterView cluster;
};

int type_index(std::vector<std::string>& types, const std::string& t) {
  auto it = std::find(types.begin(), types.end(), t);
  if (it != types.end()) return static_cast<int>(it - types.begin());
  types.push_back(t);
  return static_cast<int>(types.size() - 1);
}

JobView job_view(const JobInfo& j, const std::vector<std::string>& gpu_types, std::string& user, std::string& type) {
  JobView v;
  v.id = j.job_id;
  v.gpus = static_cast<int>(j.gpus);
  if (!j.gpu_type.empty()) {
    auto it = std::find(gpu_types.begin(), gpu_types.end(), j.gpu_type);
    // A type no node has: no machine may host it (bit 63 matches none here).
    v.type_mask =
        it != gpu_types.end() ? uint64_t{1} << std::min<size_t>(63, it - gpu_types.begin()) : uint64_t{1} << 63;
  }
  v.submit_s = static_cast<double>(j.submit_time);
  v.wait_s = j.wait_s;
  user = std::to_string(j.user_id);
  type = parse_job_hints(j.comment).type;
  v.user = user;
  v.vc = j.account;
  v.job_type = type;
  if (j.time_limit_s > 0) v.time_limit_s = j.time_limit_s;
  v.running = j.running;
  v.run_s = j.run_s;
  v.attained_gpu_s = j.attained_gpu_s;
  return v;
}

void build_views(std::span<const JobInfo> jobs, const ClusterInfo& c, PolicyViews& out) {
  out.gpu_types.clear();
  out.node_names.clear();
  out.machines.clear();
  for (const NodeInfo& n : c.nodes)
    if (n.gpus_total > 0 && n.usable) out.node_names.push_back(n.name);
  size_t k = 0;
  out.cluster = ClusterView{};
  for (const NodeInfo& n : c.nodes) {
    if (n.gpus_total == 0 || !n.usable) continue;
    MachineView m;
    m.name = out.node_names[k++];
    m.gpu_type = type_index(out.gpu_types, n.gpu_type.empty() ? "?" : n.gpu_type);
    m.total_gpus = static_cast<int>(n.gpus_total);
    m.free_gpus = static_cast<int>(n.gpus_total - std::min(n.gpus_alloc, n.gpus_total));
    m.jobs = static_cast<int>(n.jobs_running);
    out.cluster.total_gpus += m.total_gpus;
    out.cluster.free_gpus += m.free_gpus;
    out.machines.push_back(m);
  }
  out.users.assign(jobs.size(), {});
  out.types.assign(jobs.size(), {});
  out.jobs.clear();
  for (size_t i = 0; i < jobs.size(); ++i)
    out.jobs.push_back(job_view(jobs[i], out.gpu_types, out.users[i], out.types[i]));
  out.cluster.now_s = static_cast<double>(c.now);
  out.cluster.gpu_types = out.gpu_types;
  out.cluster.machines = out.machines;
}

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
      learn::add_model_order_prior(agent_.config(), rows_, out_, learn::kOrderPriorWeight, gate);  // as duet_policy.cc
      std::copy(out_.begin(), out_.end(), scores.begin());
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
  std::vector<float> rows_, cl_, out_, pmsg_, msgs_;
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
