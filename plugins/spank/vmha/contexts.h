// One function per SPANK hook and context; dispatch.cc picks by spank_context().
#pragma once
#include "plugins/spank/vmha/spank_api.h"

namespace vmha_spank {

// alloc.cc: sbatch, salloc
int alloc_init_post_opt(spank_t sp);
// srun.cc: srun
int srun_init_post_opt(spank_t sp);
// stepd.cc: slurmstepd (remote)
int stepd_init_post_opt(spank_t sp);
int stepd_task_init(spank_t sp);
int stepd_task_post_fork(spank_t sp);
int stepd_task_exit(spank_t sp);
// job_script.cc: prolog/epilog (Slurm calls no init there: the plugstack
// arguments come with the hook)
int job_script_epilog(spank_t sp, int argc, char** argv);

}  // namespace vmha_spank
