#include "plugins/spank/vmha/admin_comment.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "plugins/spank/vmha/spank_api.h"

extern char** environ;

namespace vmha_spank {
namespace {

// sacctmgr gets this long, then SIGKILL (task_exit holds the step up).
constexpr int kSacctmgrTimeoutMs = 15000;

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// `sacctmgr -i modify job where jobid=JOB set AdminComment=TEXT`, with
// slurmstepd's environment (SLURM_CONF). sacctmgr lowercases the value:
// vmha's comment is lowercase already. False with *why (its output).
bool store_in_accounting(uint32_t job, const std::string& text, std::string* why) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  std::string where = "jobid=" + std::to_string(job), set = "AdminComment=" + text;
  std::vector<char*> argv = {const_cast<char*>("sacctmgr"), const_cast<char*>("-i"), const_cast<char*>("modify"),
                             const_cast<char*>("job"),      const_cast<char*>("where"), where.data(),
                             const_cast<char*>("set"),      set.data(),           nullptr};
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, "sacctmgr", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  if (rc != 0) {
    close(out[0]);
    *why = std::string("cannot run sacctmgr: ") + std::strerror(rc);
    return false;
  }
  std::string output;
  const double deadline = now_ms() + kSacctmgrTimeoutMs;
  bool timed_out = false;
  for (;;) {
    const int left = static_cast<int>(deadline - now_ms());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p = {out[0], POLLIN, 0};
    int n = poll(&p, 1, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char buf[512];
    ssize_t got = read(out[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // sacctmgr closed its output: it is ending
    if (output.size() < 2048) output.append(buf, static_cast<size_t>(got));
  }
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  for (char& c : output)
    if (c == '\n' || c == '\r') c = ' ';
  if (timed_out) {
    *why = "sacctmgr did not answer within " + std::to_string(kSacctmgrTimeoutMs / 1000) + " s";
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *why = "sacctmgr failed (status " + std::to_string(status) + "): " + output;
    return false;
  }
  return true;
}

}  // namespace

// slurmstepd links libslurmfull: the public API is there without linking it.
void set_admin_comment(uint32_t job, const std::string& text) {
  using Init = void (*)(job_desc_msg_t*);
  using Update = int (*)(job_desc_msg_t*);
  auto init = reinterpret_cast<Init>(dlsym(RTLD_DEFAULT, "slurm_init_job_desc_msg"));
  auto update = reinterpret_cast<Update>(dlsym(RTLD_DEFAULT, "slurm_update_job"));
  if (!init || !update) {
    slurm_error("vmha: slurm_update_job not found in this process; AdminComment not set");
    return;
  }
  job_desc_msg_t desc;
  init(&desc);
  desc.job_id = job;
  std::string copy = text;
  desc.admin_comment = copy.data();
  errno = 0;
  if (update(&desc) == 0) return;
  const int err = errno;
  if (err != ESLURM_JOB_FINISHED) {
    using StrError = char* (*)(int);
    auto str = reinterpret_cast<StrError>(dlsym(RTLD_DEFAULT, "slurm_strerror"));
    slurm_error("vmha: job %u: cannot set AdminComment '%s': %s", job, text.c_str(),
                str ? str(err) : std::to_string(err).c_str());
    return;
  }
  std::string why;
  if (store_in_accounting(job, text, &why))
    slurm_info("vmha: job %u had finished (cancelled?): AdminComment '%s' stored in accounting", job, text.c_str());
  else
    slurm_error("vmha: job %u had finished and sacctmgr could not store its AdminComment '%s': %s", job, text.c_str(),
                why.c_str());
}

}  // namespace vmha_spank
