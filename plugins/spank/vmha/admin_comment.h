// The job's AdminComment, where vmha records what the job's protected tasks
// did (ha_accounting.h). slurmstepd only, as root (task_exit).
//
// While the job runs, slurmctld takes the comment (slurm_update_job) and
// sends it to slurmdbd with the job's completion record. Once the job has
// finished, slurmctld refuses it ("Job has already finished"): `scancel` and
// a time limit mark the job finished at once, before the tasks end and vmha
// sums their results, and slurmctld has sent the completion record by then.
// The comment then goes to accounting directly (`sacctmgr -i modify job`),
// so sacct still shows it.
#pragma once

#include <cstdint>
#include <string>

namespace vmha_spank {

// Errors are logged (slurm_error), never thrown.
void set_admin_comment(uint32_t job, const std::string& text);

}  // namespace vmha_spank
