// The backup of a protected task: `vmha backup` started on another node of
// the allocation as a Slurm step of the same job (`srun --overlap -w NODE`),
// so Slurm places, tracks and cleans it up like the job's other processes.
// Its standard output and error are the task's shared files DIR/out and
// DIR/err (appending): after a takeover the backup continues exactly where
// the primary's released output ended.
#pragma once
#include <sys/types.h>

#include <string>

#include "plugins/spank/task/task_env.h"

namespace vmha_task {

struct BackupStep {
  std::string node;     // where it runs
  pid_t srun = -1;      // the local srun of the step
  std::string address;  // HOST:PORT the backup listens on
};

// Starts the step; `self` is vmha-task's own path (the fencing command).
bool start_backup_step(const TaskEnv& t, const std::string& self, BackupStep* b, std::string* error);

// Waits for the backup's address file (or the step's failure).
bool wait_backup_address(const TaskEnv& t, BackupStep* b, int timeout_ms, std::string* error);

}  // namespace vmha_task
