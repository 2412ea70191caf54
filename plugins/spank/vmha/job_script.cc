// Prolog/epilog (job_script context): the job's state directory goes when the
// job ends. Never fails: a failing epilog would drain the node.
#include <cstdlib>
#include <string>

#include "plugins/spank/lib/state_dir.h"
#include "plugins/spank/vmha/args.h"
#include "plugins/spank/vmha/contexts.h"

namespace vmha_spank {

int job_script_epilog(spank_t sp, int argc, char** argv) {
  HaSettings s;
  std::string error;
  if (!apply_plugstack_args(argc, argv, &s, &error)) {
    slurm_error("vmha: plugstack.conf: %s", error.c_str());
    return 0;
  }
  uint32_t job = 0;
  if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS || job == 0) {
    const char* env = std::getenv("SLURM_JOB_ID");
    job = env ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10)) : 0;
  }
  if (job == 0) return 0;
  // The job's directory is its owner's tree: removed through descriptors, as
  // the owner, so a symlink swapped in mid-way is unlinked, never followed.
  error.clear();
  Fd state = open_state_dir(s.statedir, &error);
  if (!state || !remove_job_dir(state.get(), s.statedir, job, &error))
    slurm_error("vmha: epilog: cannot remove the state of job %u: %s", job, error.c_str());
  return 0;
}

}  // namespace vmha_spank
