// A guest path resolved through the confinement policy (confinement.h), for
// the system calls beyond path_calls.cc that take one (bind, connect).
#pragma once
#include <cstdint>
#include <functional>
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
// The same for a guest's (dirfd, path pointer) pair.
int resolve_guest_at(Process& p, int64_t dirfd, uint64_t path_va, bool follow_last, Resolved* out);

// A change of the directory entry (dirfd, path) names, through the output
// layer: op(parent fd, last component) -> 0 or -errno. Under a read-only
// root EROFS (EEXIST when `creates` and it exists). The last component is
// not followed.
int64_t change_in_parent(Process& p, int64_t dirfd, uint64_t path_va, const char* what,
                         const std::function<long(int parent, const std::string& base)>& op, bool creates);

}  // namespace vmha
