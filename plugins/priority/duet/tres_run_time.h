// priority/basic's job end accounting, which priority/duet keeps: a job's
// QOS and associations count its TRES times its time limit against
// GrpTRESRunMins while it runs; what it did not use goes back when it ends.
#pragma once

#include "plugins/slurm/slurm_internal.h"

namespace duet::plugin {

// Gives back the unused part of the job's time limit to the GrpTRESRunMins
// accounting of its QOS and associations (takes the assoc_mgr locks).
void release_unused_tres_run_time(job_record_t* job);

}  // namespace duet::plugin
