// Checks shared by sbatch/salloc (alloc.cc) and srun (srun.cc): an --ha job
// needs a second node for the backups, and the request travels to the job's
// steps as SLURM_HA.
#pragma once
#include <string>

#include "plugins/spank/vmha/args.h"

namespace vmha_spank {

// The smallest node count the command asked for (its -N, or the allocation
// it runs in), read from the command's own option table; 0 when unknown.
unsigned requested_min_nodes();

// The GPU request of the command (--gres=gpu..., --gpus, --gpus-per-*), or
// for srun inside an allocation the GPUs the job holds: "" for none.
std::string requested_gpus();

// Rejects a one-node request and one that asks for GPUs (nothing of a GPU's
// state is replicated) with a message that says why and how to fix it, and
// exports SLURM_HA for the job's steps. `command` names the caller.
int check_and_export(const HaRequest& req, const char* command);

}  // namespace vmha_spank
