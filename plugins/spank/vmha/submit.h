// Checks shared by sbatch/salloc (alloc.cc) and srun (srun.cc): an --ha job
// needs a second node for the backups, and the request travels to the job's
// steps as SLURM_HA.
#pragma once
#include "plugins/spank/vmha/args.h"

namespace vmha_spank {

// The smallest node count the command asked for (its -N, or the allocation
// it runs in), read from the command's own option table; 0 when unknown.
unsigned requested_min_nodes();

// Rejects a one-node request with a message that says how to fix it, and
// exports SLURM_HA for the job's steps. `command` names the caller.
int check_and_export(const HaRequest& req, const char* command);

}  // namespace vmha_spank
