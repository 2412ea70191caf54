// The ordering agent as priority/duet sees it.
//
// Contract: score() fills one value per job, higher = should run earlier, or
// returns false and sets *error (seam.h). Scores must be comparable across
// calls made at about the same time: a newly submitted job is scored alone and
// slotted between the jobs of the last re-score (its final place comes at the
// next re-score). score() is called from several slurmctld threads, one call
// at a time (the plugin serialises calls). It must not throw; the plugin still
// catches anything and falls back to the age+size scorer.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/model_file.h"
#include "plugins/seam/views.h"

namespace duet::plugin {

class AgentChannel;  // plugins/channel/agent_channel.h

class OrderScorer {
 public:
  virtual ~OrderScorer() = default;
  virtual std::string name() const = 0;
  virtual bool score(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores,
                     std::string* error) = 0;
  // A GPU job ended after run_s seconds of running (a learned scorer keeps
  // its run-time history from these). Serialised like score(); no throw.
  virtual void on_finish(const JobInfo& job, double run_s) {
    (void)job;
    (void)run_s;
  }

  // The agents' messages (agent_channel.h). A learned scorer connected to a
  // channel reads the placement agent's message there in every score()
  // (none, or one of another width: zeros); the others ignore it.
  virtual void connect(AgentChannel* channel) { (void)channel; }
  // A re-score of the whole pending queue: as score(), and a connected
  // learned scorer also publishes each job's message to the placement agent,
  // replacing the previous pass's set (cleared when scoring fails).
  virtual bool score_queue(std::span<const JobInfo> jobs, const ClusterInfo& cluster, std::span<double> scores,
                           std::string* error) {
    return score(jobs, cluster, scores, error);
  }
  // Whether the last score() / score_queue() used a placement message.
  virtual bool used_placement_message() const { return false; }
  // A preemptive model (duet-model(5), PREEMPTION): it ranks running jobs
  // (JobInfo::running) with pending ones, and with Preemption=requeue the
  // host preempts the running jobs it leaves out (preempt_plan.h).
  virtual bool preemptive() const { return false; }
  // For the explanation: per job of the last successful score() /
  // score_queue(), the learned network's share of its score,
  // |network| / (|network| + |prior|) in [0, 1]; empty for scorers that have
  // no such split (the fixed ones) or after a failure.
  virtual std::vector<double> learned_shares() const { return {}; }
};

// Age+size priority (like Slurm multifactor with PriorityFavorSmall):
// age_weight * min(wait / max_age, 1) + size_weight * (1 - gpus / cluster GPUs).
std::unique_ptr<OrderScorer> make_fallback_scorer(const DuetConf& conf);

// Test hook: fewer GPUs first, then longer wait.
std::unique_ptr<OrderScorer> make_small_first_scorer();

// Builds the scorer named by conf.scorer. On failure (model missing,
// unreadable, of another version, or no agent built in) returns nullptr and
// sets *error to one line naming the file and the cause; the caller then uses
// make_fallback_scorer(). Never throws.
std::unique_ptr<OrderScorer> make_order_scorer(const DuetConf& conf, std::string* error);

// THE SEAM for the learned ordering agent (plugins/seam/agent_factory.cc):
// `Scorer=model` reads conf.model_path once (model_file.h) and calls the
// registered loader with its bytes. A loader returns nullptr and sets *error
// ("<path>: bad magic", "<path>: format version 3, expected 2", ...) when it
// cannot load the model; it may throw (caught and reported). The plugin that
// hosts the agent registers it where it starts (OrderingHost::plugin_init
// calls register_ordering_agent(), plugins/ordering/ordering_model.h), as
// duet check-config does before its checks; no static initialiser does.
using OrderModelLoader = std::unique_ptr<OrderScorer> (*)(const ModelFile& model, const DuetConf& conf,
                                                          std::string* error);
void register_order_model_loader(OrderModelLoader loader);

}  // namespace duet::plugin
