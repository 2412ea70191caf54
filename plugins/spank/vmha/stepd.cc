// slurmstepd (remote context): decides whether a step is protected, prepares
// the job's state directory, turns each task into vmha-task (the supervisor
// that runs the program under `vmha run` with its backup on another node),
// and records what happened in the job's AdminComment (admin_comment.h).
//
// The batch step (SLURM_BATCH_SCRIPT) of an --ha job is protected like an
// srun step's task when its script starts no srun (batch_step.h's word
// check on the script's text, read here from slurmd's spool, as the job's
// user, before any task runs: the decision must be this process's, where
// task_exit runs).
// A script that starts srun stays a plain shell (srun needs Slurm's network,
// which a guest has not); its steps are protected, and task_init says so on
// the job's stderr. vmha-task learns that it runs the batch step from
// VMHA_TASK_STEP=batch (Slurm sets no SLURM_STEP_ID there) and runs a copy
// of the script from the task's state directory (task/batch_script.h).
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

#include "plugins/spank/lib/batch_step.h"
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
  std::string name;  // "3" or "batch": in logs and the task directories' names
  uid_t uid = 0;
  gid_t gid = 0;
  std::string job_dir;
  Fd job_fd;            // statedir/job<J>, opened without following symlinks
  std::string refused;  // why the state directory was refused: each task says so and fails
  std::string note;     // a batch script left a plain shell: said once on the job's stderr
};
Step g_step;

// srun steps and the batch step; not the extern or interactive step.
bool may_protect(uint32_t step) {
  return step != SLURM_EXTERN_CONT && step != SLURM_INTERACTIVE_STEP && step != SLURM_PENDING_STEP;
}

// Slurm caps a batch script well below this (max_script_size, 4 MiB by default).
constexpr size_t kMaxScriptBytes = 64 << 20;

// The batch script's text from slurmd's spool (argv[0] of the batch step),
// read as its owner: root reads nothing the user could not.
bool read_batch_script(spank_t sp, std::string* text, std::string* error) {
  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv || !argv[0]) {
    *error = "the batch step has no script";
    return false;
  }
  int fd = -1, open_errno = 0;
  {
    AsFileUser as(g_step.uid, g_step.gid);
    fd = open(argv[0], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    open_errno = errno;
  }
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
    open_errno = EINVAL;
  }
  if (fd < 0) {
    *error = std::string(argv[0]) + ": " + std::strerror(open_errno);
    return false;
  }
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0 && text->size() < kMaxScriptBytes) text->append(buf, n);
  int saved = errno;
  close(fd);
  if (n < 0) *error = std::string(argv[0]) + ": " + std::strerror(saved);
  return n >= 0;
}

}  // namespace

int stepd_init_post_opt(spank_t sp) {
  char role[32];
  if (spank_getenv(sp, kEnvRole, role, sizeof role) == ESPANK_SUCCESS) return 0;  // a backup step
  if (spank_get_item(sp, S_JOB_STEPID, &g_step.step) != ESPANK_SUCCESS || !may_protect(g_step.step)) return 0;
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
  const bool batch = g_step.step == SLURM_BATCH_SCRIPT;
  g_step.name = batch ? kBatchStep : std::to_string(g_step.step);
  if (batch) {
    std::string script, error;
    if (!read_batch_script(sp, &script, &error)) {
      g_step.refused = "vmha: job " + std::to_string(g_step.job) + ": cannot read the batch script (" + error +
                       "); the protected batch script is not started";
      slurm_error("%s", g_step.refused.c_str());
      return 0;
    }
    if (starts_srun(script)) {
      g_step.note = "vmha: job " + std::to_string(g_step.job) +
                    ": the batch script starts srun, so it runs as a plain shell, unprotected; its srun steps "
                    "run under vmha (vmha_spank(8))";
      slurm_info("%s", g_step.note.c_str());
      return 0;
    }
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
  if (!g_step.note.empty()) std::fprintf(stderr, "%s\n", g_step.note.c_str());
  if (!g_step.protected_) return 0;
  int argc = 0;
  char** argv = nullptr;
  if (spank_get_item(sp, S_JOB_ARGV, &argc, &argv) != ESPANK_SUCCESS || argc < 1 || !argv || !argv[0]) {
    slurm_error("vmha: the task has no command");
    return -1;
  }
  if (spank_setenv(sp, kEnvArgv0, argv[0], 1) != ESPANK_SUCCESS) return -1;
  if (g_step.step == SLURM_BATCH_SCRIPT && spank_setenv(sp, kEnvStep, kBatchStep, 1) != ESPANK_SUCCESS) return -1;
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
      "vmha: job %u step %s task %u (pid %d) runs under %s: vmha run, epoch %d ms, mode %s, backup on the %s node",
      g_step.job, g_step.name.c_str(), task, static_cast<int>(pid), settings().task.c_str(), settings().epoch_ms,
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
  slurm_info("vmha: job %u step %s task %u ended: AdminComment '%s'", g_step.job, g_step.name.c_str(), task,
             comment.c_str());
  // Why a backup took over, once: by the step's slurmstepd, for its own task.
  const std::string mine = task_dir_name(g_step.name, std::to_string(task)) + ": ";
  for (const auto& t : totals.takeovers)
    if (t.compare(0, mine.size(), mine) == 0) slurm_info("vmha: job %u %s", g_step.job, t.c_str());
  if (fd >= 0) close(fd);
  return 0;
}

}  // namespace vmha_spank
