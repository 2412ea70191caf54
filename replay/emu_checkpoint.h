// An emulated job's checkpoint: the work it has left, so that a run after a
// requeue (Slurm's SLURM_RESTART_COUNT >= 1) resumes where the preempted run
// stopped instead of starting over, as a checkpointing training job does and
// as duet-sim(1) models preemption (work kept, plus a restart overhead).
// One small text file per job, replaced atomically.
#pragma once

#include <optional>
#include <string>

namespace duet::replay {

// The checkpoint's path for a job: DIR/JOBID.
std::string checkpoint_path(const std::string& dir, const std::string& job_id);

// The work left (reference seconds) saved at `path`; nullopt if there is no
// file. A file that is there but malformed is an error (path, what was found).
std::optional<double> read_checkpoint(const std::string& path);

// Saves the work left (creating the directory); throws with the path on failure.
void write_checkpoint(const std::string& path, double work_left);

// Removes it (the job is done); a missing file is not an error.
void remove_checkpoint(const std::string& path);

}  // namespace duet::replay
