// A guest path resolved through the confinement policy (confinement.h), for
// the system calls beyond path_calls.cc that take one (bind, connect).
#pragma once
#include <string>

#include "vmha/sys/process.h"

namespace vmha {

// Where a guest (dirfd, path) pair points: a host directory fd (not owned)
// and a path relative to it; `recorded` is the path relative to the working
// directory, or the absolute path under a read-only root (read_only).
struct Resolved {
  int dir = -1;
  std::string rel;
  std::string recorded;
  bool read_only = false;
};

// `path` as the guest's working directory sees it, symlinks that leave
// their root expanded through the policy: 0 or -errno (EACCES outside it).
int resolve_guest_path(Process& p, const std::string& path, bool follow_last, Resolved* out);

}  // namespace vmha
