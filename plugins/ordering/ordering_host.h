// The ordering agent inside slurmctld, shared by priority/duet and
// site_factor/duet: duet.conf, the scorer with its age+size fallback, the
// pending GPU jobs it ranks, the finished GPU jobs it learns from, the
// thread that re-scores the whole queue every RescoreInterval seconds and,
// with a preemptive model and Preemption=requeue, the running jobs it
// preempts at a re-score (preemptor.h). Each
// plugin says what a ranking becomes (priorities, site factors) through the
// callback given to start(). No C++ exception leaves these functions.
//
// Locking: slurmctld's locks are always taken before the host's mutex, never
// after, so the re-score thread cannot deadlock with slurmctld threads that
// call the plugins with their locks held. The apply callback runs under the
// job write lock and without the host's mutex; preemptions after it, under
// the job and node write locks.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "plugins/ordering/explanation_store.h"
#include "plugins/ordering/preemptor.h"
#include "plugins/seam/duet_conf.h"
#include "plugins/seam/order_scorer.h"
#include "plugins/seam/views.h"
#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// A job the agent ranks: pending, asking for GPUs, not held (priority 0) and
// without an admin-set priority.
bool rankable(const job_record_t* job);

// Sets the job's explanation (explain.h; rank 0: at submit) when duet owns
// its SystemComment; `waiting`: explain_waiting's part, "" at submit.
void explain_job(job_record_t* job, size_t rank, size_t count, double score, const std::string& scorer_name,
                 const std::string& waiting = "");

// What one re-score read from slurmctld: the rankable jobs (by submit time,
// then job id; with preemption, their service in earlier runs), the GPU jobs
// finished since the last one (fed to the agent before it scores) and the
// nodes.
struct QueueSnapshot {
  struct Finished {
    JobInfo info;
    double run_s;
  };
  std::vector<JobInfo> jobs;
  std::vector<Finished> finished;
  ClusterInfo cluster;
};

// The agent's scores for a snapshot's jobs, with what applying them needs
// from duet.conf (copied: the host's mutex is not held then).
struct QueueRanking {
  std::vector<double> scores;  // one per snapshot job
  std::vector<double> learned;  // per snapshot job, the learned part's share of its score; empty: none
  std::string scorer_name;     // for explanations
  bool explain = false;
  LogLevel level = LogLevel::kInfo;
};

// Under the job write lock, after a re-score: each ranked job's explanation
// (rank among `values`, distinct_ranks; the learned part's share; what it
// waits for). Jobs that are no longer rankable are left alone.
void explain_ranking(const QueueSnapshot& s, const QueueRanking& r, const std::vector<uint32_t>& values);

class OrderingHost {
 public:
  // Turns a ranking into the plugin's values under the job write lock;
  // returns how many jobs changed (logged).
  using Apply = std::function<size_t(const QueueSnapshot&, const QueueRanking&)>;

  // `what`: the values the plugin sets, for the log ("priorities").
  OrderingHost(const char* plugin_type, const char* what) : plugin_type_(plugin_type), what_(what) {}

  // The plugin's own settings, read before start() and before each
  // reconfigure() (site_factor/duet: its weight); returns what to add to the
  // log line after it ("" for nothing). May throw.
  using Prepare = std::function<std::string(bool at_init)>;

  // The plugins' init(), fini() and reconfigure hook. Nothing happens
  // outside slurmctld (clients load priority plugins too). plugin_init logs
  // "<plugin_name> loaded; [note; ]agent channel: ..." and plugin_reconfigure
  // "<plugin_type>: <note>" when there is a note. Failures are logged, never
  // thrown: plugin_init returns SLURM_ERROR.
  int plugin_init(const char* plugin_name, Apply apply, const Prepare& prepare = nullptr);
  int plugin_fini();
  void plugin_reconfigure(const Prepare& prepare = nullptr);

  // Reads duet.conf, builds the scorer, attaches to the agents' channel as
  // the ordering agent and starts the re-score thread. Throws on failure.
  void start(Apply apply);
  // Stops the thread, detaches, drops the scorer.
  void stop();
  // Reads duet.conf again and re-scores now.
  void reconfigure();

  // Scores one job alone (at submit) against the last re-score's nodes;
  // the fallback's score when the scorer fails. *scorer_name for its
  // explanation.
  double score_one(const JobInfo& job, std::string* scorer_name);

  LogLevel level();
  bool explain();

 private:
  void load_locked();
  std::vector<double> score_locked(const std::vector<JobInfo>& jobs, const ClusterInfo& cluster, bool queue,
                                   bool* ok = nullptr);
  std::vector<double> rank_with_running_locked(const QueueSnapshot& s, const PreemptSnapshot& running,
                                               const PreemptLimits& limits, PreemptPlan* plan,
                                               std::vector<std::string>* kept_why);
  std::string with_message(const std::string& scorer_name) const;
  QueueSnapshot gather(time_t now);
  void rescore();
  void loop();

  const char* plugin_type_;
  const char* what_;
  Apply apply_;

  std::mutex mu_;  // guards the scorer state below; taken after slurmctld's locks only
  DuetConf conf_;
  std::unique_ptr<OrderScorer> scorer_;  // the agent, or the fallback
  std::string last_error_;               // of the scorer, logged once a minute
  time_t last_error_time_ = 0;
  ClusterInfo cluster_;  // as seen at the last re-score

  // Finished GPU jobs are found by scanning job_list at each re-score (the
  // job_end hook runs only with accounting limits enforced): those that
  // completed at or after the mark and were not fed yet. Re-score thread only.
  time_t finish_mark_ = 0;
  std::set<uint32_t> fed_at_mark_;  // ids fed whose end_time == finish_mark_
  ExplanationStore stored_;         // explanations in accounting; re-score thread only
  Preemptor preemptor_;             // re-score thread only

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  bool wake_ = false;  // re-score now (after reconfigure)
  std::thread thread_;
};

}  // namespace duet::plugin
