#include "plugins/spank/task/backup_step.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "plugins/spank/lib/hostlist.h"
#include "plugins/spank/task/spawn.h"

namespace vmha_task {

namespace {

// srun input variables a task inherits from its own step's srun.
const char* const kStepSrunSettings[] = {"SLURM_LABELIO",
                                         "SLURM_UNBUFFEREDIO",
                                         "SLURM_STDOUTMODE",
                                         "SLURM_STDERRMODE",
                                         "SLURM_STDINMODE",
                                         "SLURM_OPEN_MODE",
                                         "SLURM_NTASKS_PER_NODE",
                                         "SLURM_NTASKS_PER_CORE",
                                         "SLURM_NTASKS_PER_SOCKET",
                                         "SLURM_NTASKS_PER_GPU",
                                         "SLURM_DISTRIBUTION",
                                         "SLURM_CPU_BIND",
                                         "SLURM_MEM_BIND",
                                         "SLURM_GPU_BIND",
                                         "SLURM_GPUS_PER_TASK",
                                         "SLURM_TRES_PER_TASK",
                                         "SLURM_CPUS_PER_GPU",
                                         "SLURM_CPUS_PER_TASK",
                                         "SLURM_EXCLUSIVE",
                                         "SLURM_WAIT",
                                         "SLURM_KILL_BAD_EXIT",
                                         "SLURM_MPI_TYPE",
                                         "SLURM_ACCEL_BIND",
                                         "SLURM_CONTAINER",
                                         "SLURM_DEBUG",
                                         "SLURM_PROFILE",
                                         "SLURM_NPROCS",
                                         "SLURM_NTASKS",
                                         "SLURM_NNODES",
                                         "SLURM_STEP_GPUS",
                                         "SLURM_GPUS",
                                         "SLURM_TIMELIMIT",
                                         "SLURM_MEM_PER_CPU",
                                         "SLURM_MEM_PER_GPU",
                                         "SLURM_MEM_PER_NODE",
                                         "SLURM_THREADS",
                                         "SLURM_OVERCOMMIT",
                                         "SLURM_HINT"};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// NodeAddr of NODE from Slurm (the backup listens there); NODE itself if unknown.
std::string node_address(const std::string& node) {
  std::string out = capture({"scontrol", "show", "node", node, "-o"});
  auto at = out.find("NodeAddr=");
  if (at == std::string::npos) return node;
  at += 9;
  return out.substr(at, out.find_first_of(" \n", at) - at);
}

std::string tail_of(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  return text.size() > 600 ? text.substr(text.size() - 600) : text;
}

}  // namespace

bool start_backup_step(const TaskEnv& t, const std::string& self, BackupStep* b, std::string* error) {
  b->node = vmha_spank::pick_backup_node(t.nodes, t.node, t.settings.backup);
  if (b->node.empty()) {
    *error = "no other node in the allocation for the backup (the job has only " + t.node + ")";
    return false;
  }
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "srun",
                                   "--overlap",
                                   "-N1",
                                   "-n1",
                                   "-w",
                                   b->node,
                                   "--input=none",
                                   "--output=" + t.file("backup.step"),
                                   "--error=" + t.file("backup.step"),
                                   "--open-mode=append",
                                   "--job-name=vmha-backup",
                                   "--quiet"};
  std::string extra = t.settings.srun_args;
  for (size_t s = 0; !extra.empty() && s <= extra.size();) {
    size_t c = extra.find(',', s);
    if (c == std::string::npos) c = extra.size();
    if (c > s) argv.push_back(extra.substr(s, c - s));
    s = c + 1;
  }
  std::string fence_cmd = quote(self) + " fence " + quote(t.dir) + " " + quote(t.node);
  argv.insert(argv.end(),
              {t.settings.vmha, "backup", "--listen", node_address(b->node) + ":0", "--key", t.file("key"),
               "--address-file", t.file("backup.addr"), "--workdir", t.cwd,
               // A resumed program appends to the task's files itself: srun would
               // forward its output through a pipe, and the file's size is how the
               // backup knows what the primary released.
               "--stdout", t.file("out"), "--stderr", t.file("err"), "--lease-ms", std::to_string(t.settings.lease_ms),
               "--accept-timeout", "60", "--log", t.file("backup.log"), "--stats-file", t.file("backup.stats"),
               "--fence-cmd", fence_cmd});
  // The resumed guest keeps the primary's confinement policy.
  std::vector<std::string> ro = t.read_only_options();
  argv.insert(argv.end(), ro.begin(), ro.end());
  std::vector<std::string> add = {std::string(vmha_spank::kEnvRole) + "=backup",
                                  "UCX_LOG_FILE=" + t.file("ucx-backup.log")};
  if (!t.settings.transports.empty()) add.push_back("UCX_TLS=" + t.settings.transports);
  // The task's environment carries the job step's srun settings (e.g.
  // SLURM_LABELIO from `srun -l`, which would prefix the backup's output).
  std::vector<std::string> drop = {vmha_spank::kEnvHa, vmha_spank::kEnvSpankHa,
                                   std::string("SLURM_SPANK_") + vmha_spank::kEnvSpankHa};
  for (const char* v : kStepSrunSettings) drop.push_back(v);
  auto env = child_environment(drop, add);
  SpawnFiles files;
  files.out = files.err = t.file("srun.log");
  files.null_stdin = true;
  b->srun = spawn(argv, env, files, error);
  return b->srun > 0;
}

bool wait_backup_address(const TaskEnv& t, BackupStep* b, int timeout_ms, std::string* error) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream f(t.file("backup.addr"));
    std::string addr;
    if (f >> addr && !addr.empty()) {
      b->address = addr;
      return true;
    }
    int st;
    if (waitpid(b->srun, &st, WNOHANG) == b->srun) {
      b->srun = -1;
      *error = "the backup step on " + b->node + " ended before it listened: " + tail_of(t.file("srun.log")) +
               tail_of(t.file("backup.log"));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *error = "the backup step on " + b->node + " did not listen within " + std::to_string(timeout_ms / 1000) +
           " s: " + tail_of(t.file("srun.log"));
  return false;
}

}  // namespace vmha_task
