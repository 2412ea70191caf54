// Discrete-event cluster simulator (man duet-sim(1)).
//
// Deterministic for a seed. Gang scheduling: all GPUs of a job start and stop
// together. Decision points: job arrivals, completions, and every `period_s`
// for preemptive or joint policies. At equal times the order is: completions,
// then arrivals, then timers (fluctuation step, period), then one scheduling
// pass; equal-time completions go by trace order.
//
// A pass ranks pending jobs (ordering policy) and asks the placement policy for
// each in turn; a blocking policy (FIFO) stops at the first job that cannot
// start. Preemptive policies rank running and pending jobs together: the
// ranked prefix that fits the cluster's GPUs keeps running or starts, running
// jobs outside it are preempted; free GPUs left are then offered down the list.
//
// For trainers: step() advances one decision point at a time; policies are
// called through the interfaces of policy/core/policy.h, so a trainer passes
// its own policy objects (which may record decisions) and an observer.
#pragma once

#include <functional>
#include <memory>

#include "policy/core/policy.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/perf_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"
#include "policy/sim/metrics.h"

namespace duet {

struct SimOptions {
  ModelOptions model;          // seed, ideal mode, model constants
  double period_s = 300;       // decision period for preemptive/joint policies
  // Limits on preemption, as duet.conf's for priority/duet (duet.conf(5),
  // PREEMPTION); 0 = none (the default). A running job the ranking would
  // preempt keeps running while its current run is shorter than min_run_s,
  // or than job_interval_s once it has been preempted before, or after
  // max_restarts preemptions; a pass preempts at most max_per_pass jobs, the
  // lowest ranked first.
  struct PreemptLimits {
    double min_run_s = 0, job_interval_s = 0;
    int max_restarts = 0, max_per_pass = 0;
  } preempt_limits;
  double sample_period_s = 0;  // cluster-state samples for plots; 0 = span/1000
  // Jobs larger than the GPUs they may use can never start: error (default)
  // or leave them out and count them in SimResult (never silently).
  bool drop_oversized = false;
  std::function<void(double done_fraction)> progress;  // called now and then
};

class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void on_start(const JobView& /*job*/, const Placement& /*where*/, double /*now*/) {}
  virtual void on_preempt(const JobView& /*job*/, double /*now*/) {}
  virtual void on_finish(const JobView& /*job*/, double /*now*/) {}
};

class Simulator {
 public:
  // The trace, cluster, table and prices must outlive the simulator. `prices`
  // may be null (fees and energy are then 0). Throws InputError for a job
  // whose gpu_type or job_type the cluster/table lack, or (unless
  // drop_oversized) that asks more GPUs than it may use.
  Simulator(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table, const PriceTable* prices,
            const SimOptions& options);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  void set_policies(OrderingPolicy* ordering, PlacementPolicy* placement);
  void set_joint(JointPolicy* joint);
  void set_observer(SimObserver* observer);

  // Processes the next decision point; false when every job has finished.
  bool step();
  // Steps to the end and returns the result (wall_s filled).
  SimResult run();
  SimResult result() const;
  double now() const;
  int64_t dropped_jobs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> p_;
};

}  // namespace duet
