// The places of the policy beyond its roots (confinement.h): the run's
// private /tmp and /dev/shm inside the working directory, the process's
// working directory, and the directories above the roots whose metadata the
// guest may see.
#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "vmha/common/remove_tree.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/path_parts.h"

namespace vmha {

namespace {

// Lexically: `.` dropped, `..` takes one component back (not above the start).
std::vector<std::string> normalized(const std::string& path) {
  std::vector<std::string> out;
  for (std::string& c : path_components(path)) {
    if (c == ".") continue;
    if (c == "..") {
      if (!out.empty()) out.pop_back();
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

// `prefix` is `path` or one of its ancestors, component-wise.
bool starts_with(const std::vector<std::string>& path, const std::vector<std::string>& prefix) {
  if (prefix.size() > path.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (path[i] != prefix[i]) return false;
  return true;
}

std::string joined(const std::string& dir, const std::string& rest) {
  if (rest.empty() || rest == ".") return dir;
  return dir == "." ? rest : (dir == "/" ? "" : dir) + "/" + rest;
}

}  // namespace

std::string new_run_id() {
  unsigned char b[8] = {};
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    const uint64_t t = static_cast<uint64_t>(getpid()) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(time(nullptr));
    std::memcpy(b, &t, sizeof b);
  }
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", b[i]);
  return hex;
}

bool valid_run_id(const std::string& id) {
  if (id.size() != 16) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void Confinement::close_private() {
  for (const PrivateRoot& r : private_) close(r.fd);
  private_.clear();
}

Status Confinement::set_private(const std::string& run_id) {
  close_private();
  run_id_.clear();
  if (run_id.empty()) return Status();
  if (!valid_run_id(run_id)) return Status::error("run id '" + run_id + "' is not 16 hex digits");
  const std::string run = std::string(kStateDir) + "/" + run_id;
  for (const std::string& dir : {std::string(kStateDir), run})
    if (mkdirat(root_fd_, dir.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::error(errno_text("private directory " + root_path_ + "/" + dir));
  for (const PrivateDir& d : kPrivateDirs) {
    const std::string rec = run + "/" + d.name;
    if (mkdirat(root_fd_, rec.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::error(errno_text("private directory " + root_path_ + "/" + rec));
    int fd = open_beneath(root_fd_, rec, O_PATH | O_DIRECTORY | O_NOFOLLOW, 0);
    if (fd < 0) {
      close_private();
      return Status::error("private directory " + root_path_ + "/" + rec + ": " + std::strerror(-fd));
    }
    private_.push_back({d.guest, rec, fd});
  }
  run_id_ = run_id;
  return Status();
}

void Confinement::remove_private() const {
  if (run_id_.empty() || root_fd_ < 0) return;
  int state = open_beneath(root_fd_, kStateDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
  if (state < 0) return;
  std::string unused;
  remove_tree(state, run_id_, root_path_ + "/" + kStateDir + "/" + run_id_, &unused);
  close(state);
  unlinkat(root_fd_, kStateDir, AT_REMOVEDIR);  // fails while another run or held files use it
}

bool Confinement::reserved(const std::string& recorded) const {
  if (recorded.empty() || recorded[0] == '/') return false;
  std::vector<std::string> c = normalized(recorded);
  if (c.empty() || c[0] != kStateDir) return false;
  return run_id_.empty() || c.size() < 3 || c[1] != run_id_;
}

int Confinement::change_dir(const Located& dir) {
  int fd = open_beneath(dir.dir, dir.rel, O_PATH | O_DIRECTORY, 0);
  if (fd < 0) return fd;
  // The directory's own path, as Linux's getcwd gives it (symlinks and `..` resolved).
  std::string recorded = dir.recorded;
  char host[PATH_MAX];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), host, sizeof host - 1);
  if (n > 0) {
    host[n] = 0;
    const std::vector<std::string> h = path_components(host);
    const std::vector<std::string> root = path_components(root_path_);
    if (!dir.read_only && starts_with(h, root)) {
      recorded = join_components(h, root.size());
    } else if (dir.read_only) {
      for (const ReadOnlyRoot& r : read_only_) {
        const std::vector<std::string> real = path_components(r.real);
        if (r.name.empty() && starts_with(h, real)) {
          recorded = joined(r.path, join_components(h, real.size()));
          break;
        }
      }
    }
  }
  if (cwd_fd_ >= 0) close(cwd_fd_);
  cwd_fd_ = fd;
  cwd_ = Located{fd, ".", dir.read_only, recorded};
  return 0;
}

std::string Confinement::guest_path(const std::string& recorded, bool read_only) const {
  if (read_only || (!recorded.empty() && recorded[0] == '/')) return recorded;
  // Not normalized: a `..` of the rest leads above the guest's directory, as
  // symlink expansion (confinement_links.cc) will find.
  const std::vector<std::string> c = path_components(recorded);
  for (const PrivateRoot& r : private_) {
    const std::vector<std::string> pre = path_components(r.recorded);
    if (starts_with(c, pre)) return joined(r.guest, join_components(c, pre.size()));
  }
  return joined(root_path_, recorded);
}

bool Confinement::above_root(const std::string& path) const {
  if (path.empty() || path[0] != '/') return false;
  const std::vector<std::string> c = path_components(path);
  for (const std::string& x : c)
    if (x == "." || x == "..") return false;
  auto below = [&](const std::string& root) {
    const std::vector<std::string> r = path_components(root);
    return r.size() > c.size() && starts_with(r, c);
  };
  if (below(root_path_)) return true;
  for (const ReadOnlyRoot& r : read_only_)
    if (below(r.path)) return true;
  for (const PrivateRoot& r : private_)
    if (below(r.guest)) return true;
  return false;
}

}  // namespace vmha
