#include "plugins/spank/lib/state_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "plugins/seam/file_text.h"
#include "vmha/common/remove_tree.h"

namespace vmha_spank {

using duet::plugin::mode_text;

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
std::string errno_text(int err) { return std::strerror(err); }

bool writable_by_others(const struct stat& st) { return (st.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

// The components of an absolute, already resolved path.
std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The real path of `path`, or of its parent plus its last component when it
// does not exist yet (it is created then).
bool resolve(const std::string& path, std::string* real, std::string* error) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf)) {
    *real = buf;
    return true;
  }
  int err = errno;
  auto slash = path.find_last_of('/');
  std::string base = path.substr(slash + 1);
  if (err != ENOENT || base.empty() || base == "." || base == "..") {
    *error = "statedir " + path + ": " + errno_text(err);
    return false;
  }
  std::string parent = slash == 0 ? "/" : path.substr(0, slash);
  if (!::realpath(parent.c_str(), buf)) {
    *error = "statedir " + path + ": its parent " + parent + ": " + errno_text(errno);
    return false;
  }
  *real = std::string(buf) + (std::string(buf) == "/" ? "" : "/") + base;
  return true;
}

// Every directory and symlink met on the path as written must be root's and
// unwritable by others (sticky directories such as /tmp excepted): otherwise
// a user could redirect the path between this check and its use.
bool lexical_path_trusted(const std::string& path, std::string* error) {
  std::string at;
  auto parts = components(path);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    at += "/" + parts[i];
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0) {
      if (errno == ENOENT && i + 1 == parts.size()) return true;  // created later
      *error = "statedir " + path + ": " + at + ": " + errno_text(errno);
      return false;
    }
    bool last = i + 1 == parts.size();
    if (S_ISLNK(st.st_mode) && st.st_uid != 0) {
      *error = "statedir " + path + ": " + at + " is a symlink owned by uid " + std::to_string(st.st_uid) +
               ", not root; refusing to follow it";
      return false;
    }
    if (!S_ISLNK(st.st_mode) && !last && (st.st_uid != 0 || (writable_by_others(st) && !(st.st_mode & S_ISVTX)))) {
      *error = "statedir " + path + ": " + at + " (uid " + std::to_string(st.st_uid) + ", mode " +
               mode_text(st.st_mode) + ") is not a root-owned directory that only root can change";
      return false;
    }
  }
  return true;
}

}  // namespace

Fd open_state_dir(const std::string& path, std::string* error) {
  if (path.empty() || path[0] != '/') {
    *error = "statedir '" + path + "' is not an absolute path";
    return Fd();
  }
  std::string real;
  if (!lexical_path_trusted(path, error) || !resolve(path, &real, error)) return Fd();
  Fd dir(::open("/", kDirFlags));
  if (!dir) {
    *error = std::string("cannot open /: ") + errno_text(errno);
    return Fd();
  }
  auto parts = components(real);
  if (parts.empty()) {
    *error = "statedir " + path + " is the root directory";
    return Fd();
  }
  std::string at;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    at += "/" + parts[i];
    bool created = false;
    if (last && ::mkdirat(dir.get(), parts[i].c_str(), 0711) == 0) created = true;
    Fd next(::openat(dir.get(), parts[i].c_str(), kDirFlags));
    if (!next) {
      int err = errno;
      *error =
          "statedir " + path + ": " + at +
          (err == ELOOP || err == ENOTDIR ? std::string(" is not a directory (a symlink?)") : ": " + errno_text(err));
      return Fd();
    }
    if (created) ::fchmod(next.get(), 0711);  // not what the umask left
    struct stat st;
    if (::fstat(next.get(), &st) != 0) {
      *error = "statedir " + path + ": " + at + ": " + errno_text(errno);
      return Fd();
    }
    uid_t want = last ? ::geteuid() : 0;
    if (st.st_uid != want) {
      *error = "statedir " + path + ": " + at + " is owned by uid " + std::to_string(st.st_uid) + ", not " +
               (want == 0 ? "root" : "uid " + std::to_string(want)) +
               ": a user who owns it could replace job directories (use a root-owned directory)";
      return Fd();
    }
    bool sticky_above = !last && (st.st_mode & S_ISVTX);
    if (writable_by_others(st) && !sticky_above) {
      *error = "statedir " + path + ": " + at + " is writable by group or others (mode " + mode_text(st.st_mode) +
               "): users could plant job directories or symlinks there" +
               (last ? "; remove it (vmha creates it root-owned, mode 0711) or chmod 0711 it" : "");
      return Fd();
    }
    dir = std::move(next);
  }
  return dir;
}

Fd open_job_dir(int state_fd, const std::string& state_path, uint32_t job, uid_t uid, gid_t gid, std::string* error) {
  std::string name = "job" + std::to_string(job);
  std::string where = state_path + "/" + name;
  bool created = ::mkdirat(state_fd, name.c_str(), 0700) == 0;
  if (!created && errno != EEXIST) {
    *error = "cannot create " + where + ": " + errno_text(errno);
    return Fd();
  }
  Fd dir(::openat(state_fd, name.c_str(), kDirFlags));
  if (!dir) {
    int err = errno;
    *error = where +
             (err == ELOOP || err == ENOTDIR ? std::string(" exists and is not a directory (a symlink?)")
                                             : ": " + errno_text(err)) +
             "; refusing to use it";
    return Fd();
  }
  struct stat st;
  if (::fstat(dir.get(), &st) != 0) {
    *error = where + ": " + errno_text(errno);
    return Fd();
  }
  // Only root can create entries in the state directory, so an existing one
  // is an earlier step's (already given to uid) or one whose chown failed.
  if (!created && st.st_uid != uid && st.st_uid != 0) {
    *error = where + " exists and belongs to uid " + std::to_string(st.st_uid) + ", not the job's owner uid " +
             std::to_string(uid) + " (left from an earlier job with this id?); refusing to use it";
    return Fd();
  }
  if (::fchown(dir.get(), uid, gid) != 0 || ::fchmod(dir.get(), 0700) != 0) {
    *error = "cannot give " + where + " to uid " + std::to_string(uid) + ": " + errno_text(errno);
    return Fd();
  }
  return dir;
}

bool remove_job_dir(int state_fd, const std::string& state_path, uint32_t job, std::string* error) {
  std::string name = "job" + std::to_string(job);
  std::string where = state_path + "/" + name;
  Fd dir(::openat(state_fd, name.c_str(), kDirFlags));
  if (!dir) {
    if (errno == ENOENT) return true;
    if ((errno == ELOOP || errno == ENOTDIR) && ::unlinkat(state_fd, name.c_str(), 0) == 0) return true;
    *error = where + ": " + errno_text(errno);
    return false;
  }
  struct stat st;
  if (::fstat(dir.get(), &st) != 0) {
    *error = where + ": " + errno_text(errno);
    return false;
  }
  std::string problem;
  {
    // As the directory's owner: the tree is the user's (any depth, no link
    // followed: vmha/common/remove_tree.h); its own entry in the root-owned
    // state directory goes below, as root.
    AsFileUser as(st.st_uid, st.st_gid);
    vmha::remove_tree(state_fd, name, where, &problem);
  }
  if (::unlinkat(state_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT)
    problem.clear();
  else if (problem.empty())
    problem = where + ": " + errno_text(errno);
  if (!problem.empty()) *error = problem;
  return problem.empty();
}

AsFileUser::AsFileUser(uid_t uid, gid_t gid)
    : old_uid_(static_cast<uid_t>(::setfsuid(static_cast<uid_t>(-1)))),
      old_gid_(static_cast<gid_t>(::setfsgid(static_cast<gid_t>(-1)))) {
  ::setfsgid(gid);
  ::setfsuid(uid);
}

AsFileUser::~AsFileUser() {
  ::setfsuid(old_uid_);
  ::setfsgid(old_gid_);
}

}  // namespace vmha_spank
