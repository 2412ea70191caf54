// Running Slurm's client commands (sbatch, sacct, squeue, scontrol) without a
// shell: argv as given, stdout and stderr captured, a wall-clock limit.
#pragma once

#include <string>
#include <vector>

namespace duet::replay {

struct CommandResult {
  int status = -1;  // exit status; -1 if it did not exit normally (signal, timeout)
  bool timed_out = false;
  std::string out, err;
};

// Throws std::runtime_error if the program cannot be started.
CommandResult run_command(const std::vector<std::string>& argv, double timeout_s = 60);

// "prog a 'b c'": for messages.
std::string command_text(const std::vector<std::string>& argv);

}  // namespace duet::replay
