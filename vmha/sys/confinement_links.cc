// Symlinks whose resolution would leave their root (confinement.h): Debian's
// /lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2,
// a `..` above a root. The path is expanded here link by link, each link
// read through the policy (nothing outside it is looked at), and the final
// target is located afresh and opened with RESOLVE_BENEATH beneath its own
// root: a link that changes meanwhile can make the open fail, never escape.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "vmha/sys/confinement.h"
#include "vmha/sys/path_parts.h"

namespace vmha {

namespace {
constexpr int kMaxLinks = 40;  // Linux's MAXSYMLINKS
}  // namespace

bool Confinement::leaves_root(int dir_fd, const std::string& rel, bool follow_last) const {
  long fd = openat2_beneath(dir_fd, rel, O_PATH | (follow_last ? 0 : O_NOFOLLOW), 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    return false;
  }
  return errno == EXDEV;
}

std::string Confinement::absolute(const Located& l) const { return guest_path(l.recorded, l.read_only); }

int Confinement::read_link(const std::string& path, std::string* target) const {
  Located l;
  if (locate(path, &l) != 0) return 0;  // above or beside the roots: only the final locate decides
  long fd = openat2_beneath(l.dir, l.rel, O_PATH | O_NOFOLLOW, 0);
  if (fd < 0) return errno == EXDEV ? -EACCES : -errno;  // EXDEV: a directory on the way changed
  struct stat st;
  int rc = fstat(static_cast<int>(fd), &st);
  char buf[PATH_MAX];
  ssize_t n = rc == 0 && S_ISLNK(st.st_mode) ? readlinkat(static_cast<int>(fd), "", buf, sizeof buf) : 0;
  int err = errno;
  close(static_cast<int>(fd));
  if (rc != 0 || n < 0) return -err;
  if (n == 0) return 0;
  target->assign(buf, static_cast<size_t>(n));
  return 1;
}

int Confinement::expand_links(const std::string& path, bool follow_last, std::string* out) const {
  std::vector<std::string> done;  // resolved so far: no symlink among them
  std::vector<std::string> todo = path_components(path);
  std::reverse(todo.begin(), todo.end());  // a stack: the next component last
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    if (c == ".") continue;
    if (c == "..") {
      // A root that is itself a symlink (/lib -> usr/lib): `..` is its target's parent.
      const std::string here = absolute_path(done);
      auto root = std::find_if(read_only_.begin(), read_only_.end(),
                               [&](const ReadOnlyRoot& r) { return r.path == here && r.name.empty(); });
      if (root != read_only_.end()) done = path_components(root->real);
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(std::move(c));
    if (todo.empty() && !follow_last) break;
    std::string target;
    int rc = read_link(absolute_path(done), &target);
    if (rc == -ENOENT && todo.empty()) break;  // a name to create: its directory resolved
    if (rc < 0) return rc;
    if (rc == 0) continue;
    if (++links > kMaxLinks) return -ELOOP;
    done.pop_back();
    if (target[0] == '/') done.clear();
    std::vector<std::string> more = path_components(target);
    todo.insert(todo.end(), more.rbegin(), more.rend());
  }
  *out = absolute_path(done);
  if (!path.empty() && path.back() == '/' && !done.empty()) *out += "/";  // a trailing slash asks for a directory
  return 0;
}

int Confinement::locate_following(const std::string& path, bool follow_last, Located* out) const {
  std::string expanded;
  if (int e = expand_links(path, follow_last, &expanded)) return e;
  return locate(expanded, out);
}

int Confinement::open_for_reading(const std::string& path) const {
  Located l;
  if (int e = locate(path, &l)) return e;
  if (leaves_root(l.dir, l.rel, true))
    if (int e = locate_following(absolute(l), true, &l)) return e;
  // O_NONBLOCK: a FIFO would wait for a writer. Only a regular file is a
  // program: anything else is EACCES, as execve(2) answers.
  int fd = l.read_only ? open_read_only(l.dir, l.rel, O_RDONLY | O_NONBLOCK)
                       : open_beneath(l.dir, l.rel, O_RDONLY | O_NONBLOCK, 0);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    return -EACCES;
  }
  return fd;
}

}  // namespace vmha
