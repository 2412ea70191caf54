#include "vmha/sys/confinement.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace vmha {

Confinement::~Confinement() {
  if (root_fd_ >= 0) close(root_fd_);
}

Status Confinement::open_root(const std::string& dir) {
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) return Status::error(errno_text("working directory " + dir));
  root_path_ = real;
  root_fd_ = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd_ < 0) return Status::error(errno_text("working directory " + dir));
  return Status();
}

int Confinement::relative(const std::string& path, std::string* out) const {
  if (path.empty()) return -ENOENT;
  if (path[0] != '/') {
    *out = path;
    return 0;
  }
  if (path == root_path_) {
    *out = ".";
    return 0;
  }
  std::string prefix = root_path_ == "/" ? "/" : root_path_ + "/";
  if (path.compare(0, prefix.size(), prefix) != 0) return -EACCES;
  *out = path.substr(prefix.size());
  if (out->empty()) *out = ".";
  return 0;
}

bool Confinement::is_allowed_device(const std::string& path) {
  return path == "/dev/null" || path == "/dev/zero" || path == "/dev/urandom" || path == "/dev/random";
}

int Confinement::open_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
  how.mode = (flags & (O_CREAT | __O_TMPFILE)) ? (mode & 07777) : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = syscall(SYS_openat2, dir_fd, rel.c_str(), &how, sizeof how);
  if (fd >= 0) return static_cast<int>(fd);
  return errno == EXDEV ? -EACCES : -errno;
}

int Confinement::open_parent(int dir_fd, const std::string& rel, std::string* base) const {
  std::string p = rel;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
  *base = slash == std::string::npos ? p : p.substr(slash + 1);
  if (*base == "..") return -EACCES;
  return open_beneath(dir_fd, parent, O_PATH | O_DIRECTORY, 0);
}

}  // namespace vmha
