// The simulator's parts, behind the Simulator facade (simulator.cc). Only
// policy/sim includes this. Who owns what:
//   SimState      the one mutable state: the clock, the jobs, the cluster, the
//                 queues, the counters; job transitions (sim_state.cc, jobs in sim_jobs.cc)
//   ClusterState  machines, free GPUs, co-location and speeds (cluster_state.cc)
//   Accounting    what a run measured so far, and the SimResult (accounting.cc)
//   Scheduler     the scheduling passes at a decision point (passes.cc)
//   EventLoop     the next decision point: completions, arrivals, timers (event_loop.cc)
// Scheduler and EventLoop act on a SimState they do not own.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "policy/core/policy.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/perf_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"
#include "policy/sim/event_queue.h"
#include "policy/sim/metrics.h"
#include "policy/sim/simulator.h"

namespace duet::sim {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A timer's next time, or an error once `at` is too large to advance (sim_state.cc).
double later(double at, double step, const char* timer);

// --- a job's progress ---------------------------------------------------------
enum class JobState : uint8_t { Future, Pending, Running, Done, Dropped };

struct SimJob {
  const JobSpec* spec = nullptr;
  int jt = 0;  // job type (row of the throughput table)
  int gpus = 0;
  uint64_t mask = 0;  // GPU types it may use; 0 = any
  JobState st = JobState::Future;
  double remaining = 0;  // reference seconds of work left (as of `last`)
  double rate = 0;
  double last = 0;
  double first_start = -1, seg_start = 0, finish = -1, run_s = 0, attained = 0;
  int64_t preempted = 0;
  Placement placement;
};

// --- cluster state (cluster_state.cc) -----------------------------------------
// Machines as policies see them, the jobs on each, free GPUs per type, and the
// performance model, which knows who shares a machine and how fast it is.
class ClusterState {
 public:
  ClusterState(const ClusterModel& cluster, const ThroughputTable& table, const ModelOptions& opt);

  const ClusterModel& cluster_model() const { return cluster_; }
  PerfModel& perf() { return perf_; }
  const PerfModel& perf() const { return perf_; }
  const std::vector<std::string>& type_names() const { return type_names_; }
  int gpu_type(int machine) const { return machines_[machine].gpu_type; }
  const std::vector<uint32_t>& jobs_on(int machine) const { return on_[machine]; }
  int free_total() const { return free_total_; }
  int busy() const { return busy_; }
  int total_gpus() const { return cluster_.total_gpus; }

  // Free GPUs of the types in `mask` (0 = every type).
  int usable_free(uint64_t mask) const;
  // Throws std::logic_error naming policy `who` unless `p` places exactly
  // job.gpus GPUs on distinct machines with that many free GPUs of its types.
  void check_placement(const SimJob& job, const Placement& p, const std::string& who) const;
  // Job `i` takes (gives back) the GPUs of its placement.
  void occupy(uint32_t i, const SimJob& job);
  void release(uint32_t i, const SimJob& job);
  ClusterView view(double now) const;

 private:
  const ClusterModel& cluster_;
  PerfModel perf_;
  std::vector<std::string> type_names_;
  std::vector<MachineView> machines_;
  std::vector<std::vector<uint32_t>> on_;  // running jobs per machine
  std::vector<int> free_type_;
  int free_total_ = 0, busy_ = 0;
};

// --- jobs and queues (sim_jobs.cc) --------------------------------------------
// The trace's jobs in submit order (stable), checked against the cluster and
// the table; jobs too large for the GPUs they may use are Dropped (counted in
// `dropped`) or refused, as options.drop_oversized says.
std::vector<SimJob> load_jobs(const Trace& trace, const ThroughputTable& table, const ClusterState& cluster,
                              const SimOptions& options, int64_t& dropped);
// What policies see of job `j` at time `now`.
JobView job_view(const SimJob& j, const ThroughputTable& table, double now);

// Where each live job is: pending in arrival (or re-queue) order; running
// unordered, with each job's position for O(1) removal; completion times.
struct JobQueues {
  std::deque<uint32_t> pending;
  std::vector<uint32_t> running;
  std::vector<uint32_t> running_pos;  // per job
  CompletionQueue completions;

  void resize(size_t jobs);
  void add_running(uint32_t i);
  void remove_running(uint32_t i);
};

// Running jobs whose rate may have changed since the last recompute, each once,
// in the order they were marked.
class DirtySet {
 public:
  void resize(size_t jobs) { stamp_of_.assign(jobs, 0); }
  void mark(uint32_t i) {
    if (stamp_of_[i] == stamp_) return;
    stamp_of_[i] = stamp_;
    jobs_.push_back(i);
  }
  const std::vector<uint32_t>& jobs() const { return jobs_; }
  void clear() {
    jobs_.clear();
    ++stamp_;
  }

 private:
  std::vector<uint32_t> jobs_;
  std::vector<uint32_t> stamp_of_;
  uint32_t stamp_ = 1;
};

// --- metrics (accounting.cc) --------------------------------------------------
// Counters and series kept while the run goes; summarize() turns them and the
// jobs into a SimResult.
struct Accounting {
  uint64_t events = 0;
  int64_t preemptions = 0;
  std::vector<double> busy_type_s;  // closed running segments, GPU-seconds per type
  std::vector<Sample> samples;
  double first_submit = 0, last_finish = 0;
  double next_sample = 0, sample_period = 1;

  // Sampling starts at the first submit, every options.sample_period_s or
  // about 1000 samples over the trace's span plus a mean job.
  void init(const std::vector<SimJob>& jobs, const SimOptions& options, size_t gpu_types);
  // Cluster-state samples up to and including time t.
  void sample_until(double t, int busy_gpus, int queued, int running);
};

// --- the state and its transitions (sim_state.cc) -----------------------------
// Set by Simulator::set_policies / set_joint / set_observer; not owned.
struct Policies {
  OrderingPolicy* ordering = nullptr;
  PlacementPolicy* placement = nullptr;
  JointPolicy* joint = nullptr;
  SimObserver* observer = nullptr;

  // Preemptive and joint policies are also asked every decision period.
  bool periodic() const { return joint || (ordering && ordering->preemptive()); }
};

// Everything that changes during a run. Passes and the event loop change it
// through start/complete/preempt so the cluster, queues and counters stay in step.
struct SimState {
  SimState(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table, const PriceTable* prices,
           const SimOptions& options);
  // Reads the trace's jobs (throws InputError); after the options are checked.
  void load();

  const Trace& trace;
  const ThroughputTable& table;
  const PriceTable* prices;
  const SimOptions opt;
  Policies pol;
  ClusterState cluster;
  std::vector<SimJob> jobs;  // in submit order
  JobQueues q;
  DirtySet dirty;
  Accounting acct;
  double now = 0;
  int64_t done = 0, dropped = 0;
  bool freed = false;  // GPUs freed since the last scheduling pass

  JobView view(uint32_t i) const { return job_view(jobs[i], table, now); }
  void start(uint32_t i, Placement p);
  void complete(uint32_t i);
  void preempt(uint32_t i);
  // New rates and completion times for the dirty jobs still running.
  void recompute_rates();

 private:
  void stop(uint32_t i);
  void mark_machines(const Placement& p);
};

// --- scheduling passes (passes.cc) --------------------------------------------
class Scheduler {
 public:
  explicit Scheduler(SimState& s) : s_(s) {}
  void arrived(uint32_t i) { arrivals_.push_back(i); }
  // One pass at a decision point (`timer`: the decision period fired).
  void pass(bool timer);

 private:
  void schedule(bool timer);
  bool try_start(uint32_t i, const ClusterView& cv, const JobView& v);
  void build_views(const std::vector<uint32_t>& ids);
  void ranked_pass(std::vector<uint32_t> ids);
  void start_ranked(const std::vector<uint32_t>& ids, bool blocking, bool& any, bool& stopped);
  void remove_started();
  void fifo_pass();
  void preemptive_pass();
  std::vector<char> keep_ranked_prefix(const std::vector<uint32_t>& ids);
  void joint_pass();

  SimState& s_;
  std::vector<uint32_t> arrivals_;  // since the last pass
  bool stalled_ = false;            // the last pass left every pending job unplaced
  // Scratch kept between passes to spare allocations.
  std::vector<JobView> views_;
  std::vector<size_t> order_;
  std::vector<uint32_t> view_job_;
};

// --- the event loop (event_loop.cc) -------------------------------------------
class EventLoop {
 public:
  EventLoop(SimState& s, Scheduler& scheduler);
  // Processes the next decision point; false when every job has finished.
  bool step();

 private:
  double next_event_time();
  void complete_due(double t);
  void admit_arrivals(double t);
  bool fire_timers(double t);
  void check_not_stuck();

  static constexpr int kIdlePasses = 1000;
  SimState& s_;
  Scheduler& scheduler_;
  size_t next_arrival_ = 0;
  double next_fluct_ = kInf, next_period_ = kInf, next_wake_ = kInf;
  int idle_passes_ = 0;
  uint64_t steps_ = 0;
};

// --- the result (accounting.cc) -----------------------------------------------
SimResult summarize(const SimState& s);

}  // namespace duet::sim
