// The batch script of an --ha job as its guest runs it (vmha_spank(8), THE
// BATCH SCRIPT). Slurm hands the batch step its script as a file in slurmd's
// spool directory: outside vmha's confinement policy (the working directory
// read-write, system paths read-only), and on the batch host only, so a
// backup on another node could not reopen it after a takeover. vmha-task
// copies it into the task's state directory, DIR/script (0500), before the
// backup starts, and gives both `vmha run` and `vmha backup` that one file as
// `--ro`. statedir is one directory for all nodes of a job (the key and the
// shared output files already need that), so the copy has the same absolute
// path on both. The shell opens the script by that path and reads it as it
// goes; the checkpoint records the descriptor as a read-only path with its
// offset (VM state fd kind 5), which a restored guest reopens through the
// backup's own policy, and the shell reads on from where it was. Its $0 is
// the copy's path.
//
// Its environment is the batch step's, as Slurm made it (the job's
// variables, SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_NUM_NODES and the
// rest, in the guest's memory, so a resumed script has them too), with one
// change: TMPDIR. Slurm sets /tmp when the job has none, where the guest may
// not write, and shells and their programs need it (sort spills a pipe's
// input there, here-documents and mktemp live there); so unless TMPDIR lies
// below the working directory, the guest's is WORKDIR/.vmha-tmp.<J>, made
// for the script and removed with everything in it when the task ends. Below
// the working directory it is replicated like the job's other files, and the
// backup reaches it as the primary does. The working directory is the batch
// step's (sbatch --chdir, or where sbatch ran), the guest's read-write root
// on both sides.
#pragma once
#include <string>

#include "plugins/spank/task/task_env.h"

namespace vmha_task {

// Copies `from` to `to` (written beside it, then renamed over it: a requeued
// job's earlier copy is replaced), mode 0500. False with *error.
bool copy_batch_script(const std::string& from, const std::string& to, std::string* error);

// The guest's TMPDIR for job `job` working in `cwd` when the task's own
// `tmpdir` (nullptr: unset) is not below `cwd`; "" when it is.
std::string batch_tmpdir(const std::string& cwd, const char* tmpdir, const std::string& job);

// For a batch step: the script's copy and the guest's TMPDIR, made before
// the backup starts (its policy needs the copy). False with *error.
bool prepare_batch_task(TaskEnv* t, std::string* error);

// Removes the guest's TMPDIR (if vmha-task made one) and what is in it,
// without following symlinks; once both sides have ended.
void remove_batch_tmpdir(const TaskEnv& t);

}  // namespace vmha_task
