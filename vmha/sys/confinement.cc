#include "vmha/sys/confinement.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "vmha/common/settings.h"
#include "vmha/sys/path_parts.h"

namespace vmha {

namespace {

// How many leading components of `path` the root `root` covers: its
// component count when root's components start path's (before any `.` or
// `..` of path), else -1.
int covers(const std::vector<std::string>& root, const std::vector<std::string>& path) {
  if (root.size() > path.size()) return -1;
  for (size_t i = 0; i < root.size(); ++i)
    if (path[i] == "." || path[i] == ".." || path[i] != root[i]) return -1;
  return static_cast<int>(root.size());
}

}  // namespace

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string::npos) colon = list.size();
    if (colon > start) out.push_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

std::vector<std::string> default_read_only_paths() { return split_path_list(kDefaultReadOnlyPaths); }

Status check_read_only_path(const std::string& path) {
  if (path.empty() || path[0] != '/') return Status::error("read-only path '" + path + "' is not absolute");
  for (const std::string& c : path_components(path))
    if (c == "." || c == "..")
      return Status::error("read-only path '" + path + "' has a '" + c + "' component (name the directory itself)");
  return Status();
}

Confinement::~Confinement() {
  if (root_fd_ >= 0) close(root_fd_);
  if (cwd_fd_ >= 0) close(cwd_fd_);
  for (const ReadOnlyRoot& r : read_only_) close(r.fd);
  close_private();
}

// Duplicates of `other`'s descriptors, not a new resolution of every root:
// a fork is frequent (a shell's every command) and the policy has dozens.
Status Confinement::open_like(const Confinement& other) {
  auto dup_fd = [](int fd) { return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0); };
  root_path_ = other.root_path_;
  root_fd_ = dup_fd(other.root_fd_);
  if (root_fd_ < 0) return Status::error(errno_text("working directory " + root_path_));
  for (const ReadOnlyRoot& r : other.read_only_) {
    ReadOnlyRoot copy = r;
    if ((copy.fd = dup_fd(r.fd)) < 0) return Status::error(errno_text("read-only path " + r.path));
    read_only_.push_back(std::move(copy));
  }
  run_id_ = other.run_id_;
  for (const PrivateRoot& r : other.private_) {
    PrivateRoot copy = r;
    if ((copy.fd = dup_fd(r.fd)) < 0) return Status::error(errno_text("private directory " + r.guest));
    private_.push_back(std::move(copy));
  }
  if (other.cwd_fd_ >= 0) {
    cwd_fd_ = dup_fd(other.cwd_fd_);
    if (cwd_fd_ < 0) return Status::error(errno_text("working directory"));
    cwd_ = other.cwd_;
    cwd_.dir = cwd_fd_;
  }
  return Status();
}

Status Confinement::open_root(const std::string& dir, const std::vector<std::string>& read_only,
                              const std::string& run_id) {
  char real[PATH_MAX];
  if (!realpath(dir.c_str(), real)) return Status::error(errno_text("working directory " + dir));
  root_path_ = real;
  root_fd_ = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd_ < 0) return Status::error(errno_text("working directory " + dir));
  const std::vector<std::string> workdir = path_components(root_path_);
  for (const std::string& given : read_only) {
    if (Status s = check_read_only_path(given); !s.ok()) return s;
    std::vector<std::string> comps = path_components(given);
    std::string path = "/" + join_components(comps, 0);
    if (comps.empty()) path = "/";
    if (covers(workdir, comps) >= 0) continue;  // inside the working directory: read-write already
    if (std::any_of(read_only_.begin(), read_only_.end(), [&](const ReadOnlyRoot& r) { return r.path == path; }))
      continue;
    // The root itself may be a symlink (/lib -> usr/lib): it names what it points to.
    char target[PATH_MAX];
    if (!realpath(path.c_str(), target)) {
      if (errno == ENOENT || errno == ENOTDIR) continue;  // nothing there to read
      return Status::error(errno_text("read-only path " + path));
    }
    struct stat st;
    if (stat(target, &st) != 0) return Status::error(errno_text("read-only path " + path));
    std::string dir = target, name;
    if (!S_ISDIR(st.st_mode)) {
      size_t slash = dir.rfind('/');
      name = dir.substr(slash + 1);
      dir = slash == 0 ? "/" : dir.substr(0, slash);
    }
    int fd = open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Status::error(errno_text("read-only path " + path));
    read_only_.push_back({path, fd, name, target});
  }
  return set_private(run_id);
}

std::vector<std::string> Confinement::read_only_paths() const {
  std::vector<std::string> out;
  for (const ReadOnlyRoot& r : read_only_) out.push_back(r.path);
  return out;
}

int Confinement::locate(const std::string& path, Located* out) const {
  if (path.empty()) return -ENOENT;
  if (path[0] != '/') {
    const std::string& cwd = cwd_.recorded;
    *out = Located{cwd_fd(), path, cwd_.read_only, cwd == "." ? path : (cwd == "/" ? "" : cwd) + "/" + path};
    return 0;
  }
  const std::vector<std::string> comps = path_components(path);
  // The longest root wins; the working directory before a read-only root of
  // the same length (open_root drops those anyway).
  int best = covers(path_components(root_path_), comps);
  const ReadOnlyRoot* ro = nullptr;
  const PrivateRoot* pr = nullptr;
  for (const ReadOnlyRoot& r : read_only_) {
    int n = covers(path_components(r.path), comps);
    if (n > best) best = n, ro = &r;
  }
  for (const PrivateRoot& r : private_) {
    int n = covers(path_components(r.guest), comps);
    if (n > best) best = n, ro = nullptr, pr = &r;
  }
  if (best < 0) return -EACCES;
  std::string rel = join_components(comps, static_cast<size_t>(best));
  if (path.back() == '/' && rel != ".") rel += "/";  // a trailing slash asks for a directory
  if (pr) {
    // A directory on the way to the working directory (/tmp/job when it is
    // /tmp/job/work) is the host's, not the private directory's: only its
    // metadata (above_root).
    const std::vector<std::string> workdir = path_components(root_path_);
    if (comps.size() > static_cast<size_t>(best) && covers(comps, workdir) >= 0) return -EACCES;
    *out = Located{pr->fd, rel, false, rel == "." ? pr->recorded : pr->recorded + "/" + rel};
    return 0;
  }
  if (!ro) {
    *out = Located{root_fd_, rel, false, rel};
    return 0;
  }
  std::string recorded = rel == "." ? ro->path : (ro->path == "/" ? "" : ro->path) + "/" + rel;
  if (!ro->name.empty()) {  // a file: only itself
    if (rel != "." || path.back() == '/') return -ENOTDIR;
    rel = ro->name;
  }
  *out = Located{ro->fd, rel, true, recorded};
  return 0;
}

bool Confinement::is_allowed_device(const std::string& path) {
  return path == "/dev/null" || path == "/dev/zero" || path == "/dev/urandom" || path == "/dev/random";
}

long Confinement::openat2_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags) | O_CLOEXEC;
  how.mode = ((flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE) ? (mode & 07777) : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return syscall(SYS_openat2, dir_fd, rel.c_str(), &how, sizeof how);
}

int Confinement::open_beneath(int dir_fd, const std::string& rel, int flags, unsigned mode) const {
  long fd = openat2_beneath(dir_fd, rel, flags, mode);
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

int Confinement::open_read_only(int dir_fd, const std::string& rel, int flags) const {
  if ((flags & __O_TMPFILE) == __O_TMPFILE) return -EROFS;  // a new (unnamed) file
  const int lookup = flags & (O_NOFOLLOW | O_DIRECTORY);
  if (flags & O_PATH) return open_beneath(dir_fd, rel, O_PATH | lookup, 0);
  int pfd = open_beneath(dir_fd, rel, O_PATH | lookup, 0);
  if (pfd == -ENOENT && (flags & O_CREAT)) {
    std::string base;
    int parent = open_parent(dir_fd, rel, &base);
    if (parent < 0) return parent;
    close(parent);
    return -EROFS;  // the directory exists: creating in it is a write
  }
  if (pfd < 0) return pfd;
  struct stat st;
  int rc = fstat(pfd, &st), err = errno;
  if (rc < 0) {
    close(pfd);
    return -err;
  }
  int res = 0;
  if ((flags & O_CREAT) && (flags & O_EXCL))
    res = -EEXIST;
  else if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
    res = -EROFS;
  else if (S_ISLNK(st.st_mode))
    res = -ELOOP;  // O_NOFOLLOW on a symlink
  else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    res = -EACCES;  // devices, FIFOs, sockets: not files to read
  if (res == 0) {
    // Reopened from the checked fd: the same inode, whatever happens to the name meanwhile.
    std::string proc = "/proc/self/fd/" + std::to_string(pfd);
    res = open(proc.c_str(), O_RDONLY | O_CLOEXEC | (flags & (O_NONBLOCK | O_DIRECTORY | O_NOCTTY | O_NOATIME)));
    if (res < 0) res = -errno;
  }
  close(pfd);
  return res;
}

}  // namespace vmha
