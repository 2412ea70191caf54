// Preemption by requeue, inside slurmctld: which running jobs may be
// requeued, which pending jobs could start now, and the requeue itself
// (slurmctld's own job_requeue(), as `scontrol requeue` and Slurm's
// PreemptMode=REQUEUE call it). Callers hold the locks each names.
#pragma once

#include <string>

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// A running batch job that Slurm would requeue: submitted with --requeue,
// or without --no-requeue under JobRequeue=1 (slurm.conf's default), not a
// heterogeneous job, in a partition that still exists. Otherwise sets *why
// ("submitted with --no-requeue or JobRequeue=0", ...). Job read lock.
bool job_requeueable(const job_record_t* job, std::string* why);

// A pending job that waits only for resources or priority (not for its
// begin time, a dependency, a hold, a limit or a reservation) and so could
// start on GPUs freed now. Job read lock.
bool job_waits_for_resources(const job_record_t* job, time_t now);

// Whether `job` (pending) may use any node set in `nodes` (its partition,
// GPU type, exclusions and a simple feature, job_fit.h). Job and node read locks.
bool job_may_use_any(const job_record_t* job, bitstr_t* nodes);

// Requeues a running job as preempted (its run ends PREEMPTED in accounting,
// as with Slurm's own PreemptMode=REQUEUE; it is pending again and eligible
// once the launch credential of its run has expired, AuthInfo=cred_expire,
// 120 s by default). Never kills: a job that cannot be requeued is left
// running and *error says why. Job and node write locks, federation read lock.
bool requeue_preempted(job_record_t* job, std::string* error);

}  // namespace duet::plugin
