// fork + execve with stdout/stderr redirected (appending) to files.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace vmha_task {

struct SpawnFiles {
  std::string out, err;  // "" = inherit
  bool null_stdin = false;
};

// Returns the child's pid, or -1 with *error.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, const SpawnFiles& files,
            std::string* error);

// The command's stdout, or "" when it fails (for `scontrol show node`).
std::string capture(const std::vector<std::string>& argv);

}  // namespace vmha_task
