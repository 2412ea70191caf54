// The ordering host's preemptions (duet.conf(5), Preemption=requeue, with a
// preemptive model): at a re-score where the pending GPU jobs that could
// start now ask for more GPUs than are free, the model ranks the running GPU
// jobs with the pending ones, as in the simulator, and the running jobs
// outside the kept prefix (preempt_plan.h) are requeued.
//
// Why a requeue from the re-score thread, and not Slurm's own preemption
// (PreemptType=preempt/..., PreemptMode=REQUEUE):
//  - Slurm preempts only to start one given pending job, chosen by Slurm's
//    priority, from the candidates its preempt plugin names; a preemptive
//    model decides which jobs to keep for the whole cluster at once.
//  - PreemptMode=REQUEUE kills a job it cannot requeue (slurm_job_preempt
//    falls back to SIGKILL); duet must never touch a job that is not
//    preemptible.
//  - It needs nothing in slurm.conf beyond the ordering plugin.
// So the thread calls slurmctld's own job_requeue() (src/slurmctld/
// slurmctld.h), as `scontrol requeue` does, with preempt=true as Slurm's
// REQUEUE mode passes it (the run ends PREEMPTED in accounting), under the
// locks _slurm_rpc_requeue takes (job and node write, federation read) and
// only for jobs Slurm would requeue (job_requeue.h): a job submitted with
// --no-requeue, or under JobRequeue=0 without --requeue, is never preempted,
// nor a job inside the limits (PreemptMinRunTime, PreemptJobInterval,
// PreemptMaxRestarts, PreemptMaxPerRescore). A job is preempted only when a
// pending job kept ahead of it may use one of its nodes.
//
// Each preemption is logged and recorded in the job's explanation
// (explain.h), stored in accounting at once for the run it ended. The
// service a preempted job had received (run time, GPU-seconds) is added to
// its later runs' features, as the simulator counts it. That memory is the
// re-score thread's, kept in a state file in StateSaveLocation
// (preempt_state.h; duet_preempt_state.site_factor_duet or .priority_duet,
// one per plugin: two ordering plugins configured at once each preempt and
// remember on their own, and neither may overwrite the other's jobs) so
// that it survives a slurmctld restart. It is written whole (state_file.h)
// and synced right after the requeues of a re-score, before slurmctld's own
// asynchronous save of the requeued jobs, so a SIGKILL after that loses
// nothing. A SIGKILL between the two leaves slurmctld with the requeued run
// still running in its job state: the file keeps each job's last counted
// run's start time, so that run is neither counted twice in the features
// nor recorded again if preempted again (preempt_state.h). The file is read
// at plugin init: one that is missing, damaged, of a version this build does
// not read or not trusted is logged in one line and the memory starts
// empty. Entries of jobs
// slurmctld no longer holds, or holds finished, are dropped at the next
// re-score, so the file holds at most the jobs preempted and not yet done.
// No C++ exception leaves these functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugins/seam/duet_conf.h"
#include "plugins/seam/preempt_plan.h"
#include "plugins/seam/preempt_state.h"
#include "plugins/seam/views.h"
#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// A running GPU job as a re-score saw it.
struct RunningJob {
  JobInfo info;  // running, with its service over all runs known
  RunningJobState state;
  int64_t start_time = 0;  // of this run: the same run when applying
};

// What a preemption pass reads from slurmctld besides the pending jobs.
struct PreemptSnapshot {
  std::vector<RunningJob> running;  // by job id
  std::vector<char> eligible;       // per pending job: could start now
  uint32_t total_gpus = 0;          // on usable nodes, and held on the others
  uint32_t free_gpus = 0;           // on usable nodes
};

class Preemptor {
 public:
  // At plugin init, before the re-score thread starts: the memory from
  // StateSaveLocation, logged (which jobs, their service) or, when the file
  // cannot be used, why not.
  void restore(const char* plugin_type, LogLevel level) noexcept;

  // Under the job read lock: forgets the jobs slurmctld no longer runs or
  // holds pending (finished, purged).
  void prune() noexcept;

  // Without slurmctld locks (file I/O): writes the state file when the
  // memory changed since it was last written; a failure is logged and
  // retried at the next call.
  void persist(const char* plugin_type) noexcept;

  // Under the job and node read locks, after prune(): the running GPU jobs
  // and, per pending job (`pending`, in the snapshot's order), whether it
  // could start now; the service of earlier runs is added to running and
  // pending jobs' infos.
  PreemptSnapshot gather(std::vector<JobInfo>& pending, const ClusterInfo& cluster, int64_t now) noexcept;

  // Whether the pending jobs that could start now ask for more GPUs than are free.
  static bool contended(const std::vector<JobInfo>& pending, const PreemptSnapshot& p);

  struct Context {
    const char* plugin_type;
    std::string scorer_name;
    bool explain = true;
    LogLevel level = LogLevel::kInfo;
  };

  // Under the job and node write locks and the federation read lock:
  // requeues the plan's jobs (indices into running, then pending) that are
  // still in the run seen and still worth preempting; returns how many.
  size_t apply(const std::vector<JobInfo>& pending, const PreemptSnapshot& p, const PreemptPlan& plan,
               const Context& ctx, int64_t now) noexcept;

 private:
  size_t apply_one(job_record_t* job, const RunningJob& r, const std::vector<uint32_t>& for_jobs, size_t rank,
                   size_t ranked, const Context& ctx, int64_t now);
  EarlierServices earlier_;  // job id -> runs this host preempted
  bool dirty_ = false;       // earlier_ differs from the state file
  std::string path_;         // of the state file, "" before restore()
  std::string save_error_;   // the last failure to write it, logged at save_error_time_
  int64_t save_error_time_ = 0;
};

}  // namespace duet::plugin
