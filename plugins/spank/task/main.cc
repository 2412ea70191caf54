// vmha-task: the process a task of an `--ha` job step runs (the vmha SPANK
// plugin puts it in place of the task's program). See vmha_spank(8).
//
//   vmha-task ARGS...            as a Slurm task: run the program named by
//                                VMHA_TASK_ARGV0 with ARGS under vmha
//   vmha-task fence DIR NODE     the backup's fencing command
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plugins/spank/task/fence.h"
#include "plugins/spank/task/supervise.h"
#include "plugins/spank/task/task_env.h"

namespace {

const char kUsage[] =
    "usage: vmha-task ARGS...          (as a task of an --ha job step; set up by the vmha SPANK plugin)\n"
    "       vmha-task fence DIR NODE   (exit 0 when the primary of DIR is gone or Slurm has NODE down)\n"
    "Runs a task's program under `vmha run` with its backup started on another node of the\n"
    "allocation, and relays the program's committed output to Slurm. See vmha_spank(8).\n";

std::string self_path(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  buf[n] = 0;
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  bool as_task = std::getenv("VMHA_TASK_ARGV0") != nullptr;
  if (!as_task && argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!as_task && argc == 4 && !std::strcmp(argv[1], "fence")) return vmha_task::fence(argv[2], argv[3], 3000);
  if (!as_task) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  vmha_task::TaskEnv t;
  std::string error;
  if (!vmha_task::read_task_env(argc, argv, &t, &error)) {
    std::fprintf(stderr, "vmha-task: %s\n", error.c_str());
    return error.find("no such executable") != std::string::npos ? 127 : 125;
  }
  return vmha_task::supervise(t, self_path(argv[0]));
}
