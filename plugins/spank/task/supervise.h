// vmha-task's job as a Slurm task: start the backup step, run the program
// under `vmha run --backup`, relay the committed output to Slurm, and when
// the primary vmha dies alone, let the backup finish the program. Returns
// the task's exit status (or re-raises the signal that ended it).
#pragma once
#include <string>

#include "plugins/spank/task/task_env.h"

namespace vmha_task {

int supervise(const TaskEnv& t, const std::string& self);

}  // namespace vmha_task
