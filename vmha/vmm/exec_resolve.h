// What execve would run for a command line: PATH search for a bare name, and
// `#!` scripts run by their interpreter, as Linux does it.
#pragma once
#include <string>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

struct ExecPlan {
  std::string path;               // the ELF file to load
  std::vector<std::string> argv;  // the argv the guest gets
};

// Linux reads at most this much of a `#!` line and nests interpreters at
// most this deep (BINPRM_BUF_SIZE, the binfmt recursion limit).
inline constexpr std::size_t kShebangMax = 256;
inline constexpr int kMaxInterpreterDepth = 4;

inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// argv[0] without a '/' is looked up in `path_env` (colon-separated; empty
// entries mean the working directory), like execvp. A file that starts with
// "#!" becomes [interpreter, optional-argument, script, argv[1]...], the
// optional argument being the rest of the line as one word.
Status resolve_exec(const std::vector<std::string>& argv, const std::string& path_env, ExecPlan* out);

}  // namespace vmha
