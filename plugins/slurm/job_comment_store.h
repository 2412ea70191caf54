// Stores a job's SystemComment in accounting. slurmctld sends the
// SystemComment to slurmdbd in neither the job's start nor its completion
// record (Slurm 22.05), so a comment set in memory never reaches sacct; this
// queues the same DBD_MODIFY_JOB Slurm's burst buffer plugins send for their
// comments (JOBCOND_FLAG_NO_WAIT: on slurmctld's dbd agent queue, in order
// after the job's own records, no wait). slurmdbd changes only a job row that
// exists: slurmctld creates it when it first hands the job to slurmdbd
// (job_recorded(), often seconds after the job started) and at the latest
// with the completion record, which is queued before select_p_job_fini.
// slurmctld only; callers hold the job write lock.
#pragma once

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// Returns false (and does nothing) without slurmdbd or outside slurmctld.
bool store_system_comment(const job_record_t* job);

// Whether slurmdbd has the job's row already (it gave slurmctld its index).
bool job_recorded(const job_record_t* job);

}  // namespace duet::plugin
