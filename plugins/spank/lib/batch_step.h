// The batch step of an --ha job (vmha_spank(8), THE BATCH SCRIPT): whether
// its script runs in vmha, and how its files are named in the job's state
// directory beside those of the srun steps' tasks. No Slurm headers here.
#pragma once
#include <string>

namespace vmha_spank {

// The batch step's name in the state directory and in vmha-task's
// VMHA_TASK_STEP (Slurm gives its batch step no SLURM_STEP_ID).
inline constexpr const char* kBatchStep = "batch";

// A task's directory below statedir/job<J>: "step<S>.task<R>" for an srun
// step, "batch.task0" for the batch step (step == kBatchStep).
std::string task_dir_name(const std::string& step, const std::string& rank);

// Whether shell text starts an srun step: `srun` as a word, possibly a path
// (/usr/bin/srun), anywhere, comments too. A batch script that does keeps
// running as a plain shell (its srun steps are the protected part): a
// false positive costs protection of the script, never a broken srun.
bool starts_srun(const std::string& text);

}  // namespace vmha_spank
