// The vmha SPANK plugin (man vmha_spank(8)): sbatch/salloc/srun --ha.
// Each hook dispatches on spank_context() to the file of its context:
// alloc.cc (sbatch, salloc), srun.cc, stepd.cc (slurmstepd), job_script.cc.
// No C++ exception leaves a hook.
#include <exception>

#include "plugins/spank/vmha/args.h"
#include "plugins/spank/vmha/contexts.h"

extern "C" {
// Declared extern so that C++ gives them external linkage (const at
// namespace scope is internal otherwise).
extern const char plugin_name[];
extern const char plugin_type[];
extern const unsigned int plugin_version;
const char plugin_name[] = "vmha";
const char plugin_type[] = "spank";
const unsigned int plugin_version = SLURM_VERSION_NUMBER;
}

namespace {

template <typename F>
int guarded(const char* hook, F f) {
  try {
    return f();
  } catch (const std::exception& e) { slurm_error("vmha: %s: %s", hook, e.what()); } catch (...) {
    slurm_error("vmha: %s: unexpected failure", hook);
  }
  return -1;
}

}  // namespace

using namespace vmha_spank;

extern "C" int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", [&] { return init_args(sp, ac, av); });
}

extern "C" int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guarded("init_post_opt", [&] {
    switch (spank_context()) {
      case S_CTX_ALLOCATOR:
        return alloc_init_post_opt(sp);
      case S_CTX_LOCAL:
        return srun_init_post_opt(sp);
      case S_CTX_REMOTE:
        return stepd_init_post_opt(sp);
      default:
        return 0;
    }
  });
}

extern "C" int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", [&] { return spank_context() == S_CTX_REMOTE ? stepd_task_init(sp) : 0; });
}

extern "C" int slurm_spank_task_post_fork(spank_t sp, int, char**) {
  return guarded("task_post_fork", [&] { return spank_context() == S_CTX_REMOTE ? stepd_task_post_fork(sp) : 0; });
}

extern "C" int slurm_spank_task_exit(spank_t sp, int, char**) {
  return guarded("task_exit", [&] { return spank_context() == S_CTX_REMOTE ? stepd_task_exit(sp) : 0; });
}

extern "C" int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  return guarded("job_epilog", [&] { return spank_context() == S_CTX_JOB_SCRIPT ? job_script_epilog(sp, ac, av) : 0; });
}
