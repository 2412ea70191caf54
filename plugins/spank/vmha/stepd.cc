// slurmstepd (remote context): decides whether a step is protected, prepares
// the job's state directory, turns each task into vmha-task (the supervisor
// that runs the program under `vmha run` with its backup on another node),
// and records what happened in the job's AdminComment (admin_comment.h).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
}

#include "plugins/spank/lib/ha_accounting.h"
#include "plugins/spank/lib/state_dir.h"
#include "plugins/spank/vmha/admin_comment.h"
#include "plugins/spank/vmha/args.h"
#include "plugins/spank/vmha/contexts.h"

namespace vmha_spank {

namespace {

struct Step {
  bool protected_ = false;
  uint32_t job = 0, step = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string job_dir;
  Fd job_fd;            // statedir/job<J>, opened without following symlinks
  std::string refused;  // why the state directory was refused: each task says so and fails
};
Step g_step;

bool is_user_step(uint32_t step) {
  return step != SLURM_BATCH_SCRIPT && step != SLURM_EXTERN_CONT && step != SLURM_INTERACTIVE_STEP &&
         step != SLURM_PENDING_STEP;
}

}  // namespace

int stepd_init_post_opt(spank_t sp) {
  char role[32];
  if (spank_getenv(sp, kEnvRole, role, sizeof role) == ESPANK_SUCCESS) return 0;  // a backup step
  if (spank_get_item(sp, S_JOB_STEPID, &g_step.step) != ESPANK_SUCCESS || !is_user_step(g_step.step)) return 0;
  HaRequest req;
  if (request_from_step(sp, &req) != 0) return -1;
  if (!req.on) return 0;
  if (req.epoch_ms) settings().epoch_ms = req.epoch_ms;
  if (spank_get_item(sp, S_JOB_ID, &g_step.job) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_UID, &g_step.uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &g_step.gid) != ESPANK_SUCCESS) {
    slurm_error("vmha: cannot read the job's id and owner");
    return -1;
  }
  // Root works here: every step is taken through descriptors (state_dir.h),
  // so nothing a user planted in statedir is followed or chowned.
  std::string error;
  Fd state = open_state_dir(settings().statedir, &error);
  if (state) g_step.job_fd = open_job_dir(state.get(), settings().statedir, g_step.job, g_step.uid, g_step.gid, &error);
  if (!g_step.job_fd) {
    // Failing here would make srun say only "Plugin initialization failed"
    // and exit 0; each task fails instead, with the reason on its stderr.
    g_step.refused = "vmha: job " + std::to_string(g_step.job) + ": " + error +
                     " (plugstack.conf statedir=); the protected task is not started";
    slurm_error("%s", g_step.refused.c_str());
    return 0;
  }
  g_step.job_dir = settings().statedir + "/job" + std::to_string(g_step.job);
  g_step.protected_ = true;
  return 0;
}

int stepd_task_init(spank_t sp) {
  if (!g_step.refused.empty()) {
    std::fprintf(stderr, "%s\n", g_step.refused.c_str());  // the task's stderr: the user sees it
    return -1;
  }
  if (!g_step.protected_) return 0;
  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv || !argv[0]) {
    slurm_error("vmha: the task has no command");
    return -1;
  }
  if (spank_setenv(sp, kEnvArgv0, argv[0], 1) != ESPANK_SUCCESS) return -1;
  for (const auto& [name, value] : task_environment(settings()))
    if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) return -1;
  // The task's program becomes vmha-task's: it resolves argv[0] itself. Only
  // this forked task process sees the change; execve() follows.
  argv[0] = strdup(settings().task.c_str());
  return argv[0] ? 0 : -1;
}

int stepd_task_post_fork(spank_t sp) {
  if (!g_step.protected_) return 0;
  uint32_t task = 0;
  pid_t pid = 0;
  spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
  spank_get_item(sp, S_TASK_PID, &pid);
  slurm_info(
      "vmha: job %u step %u task %u (pid %d) runs under %s: vmha run, epoch %d ms, mode %s, backup on the %s node",
      g_step.job, g_step.step, task, static_cast<int>(pid), settings().task.c_str(), settings().epoch_ms,
      settings().mode.c_str(), settings().backup.c_str());
  return 0;
}

// Called as slurmstepd collects each task's exit, before it tells srun. The
// job has ended already when it was cancelled (admin_comment.h).
int stepd_task_exit(spank_t sp) {
  if (!g_step.protected_) return 0;
  uint32_t task = 0;
  spank_get_item(sp, S_TASK_GLOBAL_ID, &task);
  // Tasks end on several nodes at once: sum and update under one lock, so
  // the last update holds every result written so far.
  // The job directory is the user's: touch it as the user, never following a link.
  std::vector<std::string> problems;
  JobTotals totals;
  int fd = -1;
  {
    AsFileUser as(g_step.uid, g_step.gid);
    fd = openat(g_step.job_fd.get(), ".accounting.lock", O_CREAT | O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd >= 0) flock(fd, LOCK_EX);
    totals = sum_job_results(g_step.job_fd.get(), g_step.job_dir, &problems);
  }
  for (const auto& p : problems) slurm_error("vmha: %s", p.c_str());
  std::string comment = totals.comment();
  set_admin_comment(g_step.job, comment);
  slurm_info("vmha: job %u step %u task %u ended: AdminComment '%s'", g_step.job, g_step.step, task, comment.c_str());
  // Why a backup took over, once: by the step's slurmstepd, for its own task.
  const std::string mine = "step" + std::to_string(g_step.step) + ".task" + std::to_string(task) + ": ";
  for (const auto& t : totals.takeovers)
    if (t.compare(0, mine.size(), mine) == 0) slurm_info("vmha: job %u %s", g_step.job, t.c_str());
  if (fd >= 0) close(fd);
  return 0;
}

}  // namespace vmha_spank
