// What vmha-task learns from its environment: the Slurm task it is (job,
// step, rank, node, allocation), the program it stands for, the plugin's
// settings, and the files it shares with its backup.
#pragma once
#include <string>
#include <vector>

#include "plugins/spank/lib/ha_settings.h"

namespace vmha_task {

struct TaskEnv {
  std::string job, step, rank, node;
  std::vector<std::string> nodes;  // the allocation
  std::string program;             // resolved path of the task's program
  std::vector<std::string> args;   // its arguments (argv[1..])
  std::string cwd;
  vmha_spank::HaSettings settings;
  std::string dir;  // statedir/job<J>/step<S>.task<R>, or .../batch.task0
  // The batch step (VMHA_TASK_STEP=batch): the guest runs a copy of the
  // script, DIR/script, instead of `program`, with TMPDIR `tmpdir` when
  // not empty (batch_script.h).
  bool batch = false;
  std::string script, tmpdir;

  std::string file(const char* name) const { return dir + "/" + name; }
  // What the guest runs: `program`, or the batch script's copy.
  const std::string& guest_program() const { return script.empty() ? program : script; }
  // The guest's read-only paths, the same for `vmha run` and `vmha backup`:
  // the plugin's ro= list, plus the batch script's copy.
  std::vector<std::string> read_only_options() const;
};

// False with *error saying what is missing or wrong.
bool read_task_env(int argc, char** argv, TaskEnv* t, std::string* error);

// The environment for a child: ours without the VMHA_TASK_* variables and
// `drop`, plus `add` (NAME=VALUE).
std::vector<std::string> child_environment(const std::vector<std::string>& drop, const std::vector<std::string>& add);

// Resolves PROGRAM like execvp: a name with '/' as given, else along PATH.
bool resolve_program(const std::string& name, std::string* path);

}  // namespace vmha_task
