// Which running jobs a preemptive ordering model preempts (duet.conf(5),
// Preemption=requeue). Slurm-free, as the simulator decides it
// (policy/sim/passes.cc, keep_ranked_prefix): running and pending jobs ranked
// together, the ranked jobs kept while their GPUs fit the cluster's, the
// running jobs outside what is kept preempted. In Slurm some running jobs
// cannot be preempted (not requeue-able) or may not be yet (the limits
// below): they are kept first, since their GPUs will not be freed, and the
// rest is ranked into what is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plugins/seam/duet_conf.h"

namespace duet::plugin {

// The production limits, from duet.conf.
struct PreemptLimits {
  int min_run_time_s = 600;   // of the current run
  int job_interval_s = 3600;  // of the current run, when the job was requeued before
  int max_restarts = 3;       // requeues the job has had (any cause)
  int max_per_rescore = 4;
  static PreemptLimits from(const DuetConf& c);
};

// What the limits need to know of a running job. Slurm keeps all of it
// (a job's restart count, its run's start), so the limits hold across a
// slurmctld restart: a requeued job restarts no sooner than its requeue, so
// a run that lasted job_interval_s means at most one requeue per
// job_interval_s.
struct RunningJobState {
  bool requeueable = true;
  std::string not_requeueable;  // why not, when !requeueable
  double run_s = 0;             // of the current run
  uint32_t restarts = 0;        // requeues so far, any cause
};

// "" when the job may be preempted now, else why not ("ran 30 s, less than
// PreemptMinRunTime=600").
std::string preempt_blocker(const PreemptLimits& limits, const RunningJobState& job);

struct PlanJob {
  double score = 0;  // the model's, higher = runs earlier
  uint32_t gpus = 0;
  bool running = false;
  bool pinned = false;   // running and not to be preempted (preempt_blocker)
  bool eligible = true;  // pending and able to start now (else it does not compete)
};

struct PreemptPlan {
  std::vector<char> keep;       // per job: in the kept set
  std::vector<size_t> preempt;  // running jobs outside it, lowest score first
  std::vector<size_t> rank;     // per job: 1-based place in the joint ranking
  size_t kept_pending = 0;      // eligible pending jobs kept
};

// Ranks `jobs` by score (ties: the given order), keeps pinned jobs first and
// then each job whose GPUs fit what `total_gpus` leaves; the running jobs not
// kept are preempted, at most `max_preempt` (the lowest-ranked ones). Nothing
// is preempted when no eligible pending job is kept (nobody would gain).
PreemptPlan plan_preemption(std::span<const PlanJob> jobs, uint32_t total_gpus, size_t max_preempt);

// Pending demand exceeds the free GPUs: only then does a preemptive model
// rank running jobs (as the simulator: otherwise every pending job fits and
// a plain ranked pass decides the same starts).
bool preemption_contended(std::span<const uint32_t> pending_gpus, uint32_t free_gpus);

}  // namespace duet::plugin
