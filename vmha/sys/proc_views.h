// The few /proc entries programs read about themselves, served from the
// VMM's own state (the host's /proc would describe the VMM, not the guest):
// /proc/self/exe and /proc/self/cwd (links to the program and the working
// directory), /proc/self/fd/N (a link naming what guest descriptor N is) and
// the /proc/self/fd directory (the guest's open descriptors). /proc/PID/...
// with the calling process's own guest pid, and /proc/thread-self/..., name
// the same. Everything else under /proc stays outside the policy (EACCES).
#pragma once
#include <string>

#include "vmha/sys/process.h"

namespace vmha {

struct ProcView {
  enum class Kind { kNone, kExe, kCwd, kFdLink, kFdDir } kind = Kind::kNone;
  int fd = -1;  // kFdLink: which descriptor
};

// What an absolute guest path names under /proc/self (kNone: nothing of it).
ProcView proc_view(const Process& p, const std::string& path);

// The target of a link view, as readlink(2) shows it: an absolute path, or
// "pipe:[N]" / "socket:[N]" for a pipe or socketpair; -ENOENT when the
// descriptor is not open (or the program's path is not known).
int proc_link_target(Process& p, const ProcView& v, std::string* target);

// A listing of the process's open descriptors as getdents64 returns it
// (".", "..", then one DT_LNK entry per descriptor, in order), written into
// `host_fd`, an empty host memfd whose offset becomes the listing's
// position. Called once the descriptor of the listing is installed, which
// it names too (as Linux's does). 0 or -errno.
int fill_fd_listing(const Process& p, int host_fd);
// The next whole records of such a listing that fit in `size` bytes (0 at
// its end, -EINVAL when not even one fits).
long read_fd_listing(int host_fd, char* buf, size_t size);

// What stat and fstat look at for the /proc/self/fd directory: the VMM's
// own, a directory of /proc that vmha's user owns, as the guest's is.
inline constexpr const char* kHostFdDir = "/proc/self/fd";

// /proc/self/exe of a program loaded from `path`: absolute (relative to
// `cwd`), with its symlinks resolved where the host can.
std::string program_path(const std::string& cwd, const std::string& path);

}  // namespace vmha
