// Nodes whose GRES slurmctld does not know yet, kept from jobs that ask for
// GRES.
//
// After slurmctld starts, a node's GRES counts and devices are only known
// once its slurmd registers again (gres_cnt_found is unset until then), yet
// a node recovered from the saved state is offered to jobs at once. cons_tres
// then splits a typeless request (--gres=gpu:2) on a typed node
// (Gres=gpu:v100:4) into a typed allocation without devices: the job runs
// without its GPUs (its AllocTRES has no gres/gpu) and, when it ends, its
// devices stay allocated on the node, so later jobs wait for them. Jobs
// pending across a restart (e.g. the switch to select/duet) met this when
// they started in the second before their node registered.
#pragma once

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// For a select_p_job_test that may start the job now: `nodes` without the
// nodes where a GRES the job asks for is not known yet, as a new bitmap the
// caller frees; nullptr when there is nothing to leave out (no GRES asked
// for, every node registered). Powered-down nodes (power saving) stay: they
// register only after a job was given them. Callers hold slurmctld's job
// and node locks.
bitstr_t* nodes_with_known_gres(const job_record_t* job, const bitstr_t* nodes);

}  // namespace duet::plugin
