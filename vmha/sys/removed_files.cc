#include "vmha/sys/removed_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <vector>

#include "vmha/sys/confinement.h"
#include "vmha/sys/process_tree.h"

namespace vmha {

namespace {

// The files (device, inode) that some descriptor of the tree has open.
std::set<FileId> open_files(const ProcessTree& tree) {
  std::set<FileId> out;
  for (const auto& p : tree.all())
    for (const FdEntry& e : p->fds.entries()) {
      struct stat st;
      if (e.host_fd >= 0 && e.kind == FdKind::kFile && fstat(e.host_fd, &st) == 0) out.insert({st.st_dev, st.st_ino});
    }
  return out;
}

void unlink_held(int root_fd, const std::string& run_id, ino_t ino) {
  unlinkat(root_fd, held_path(run_id, ino).c_str(), 0);
}
// rmdir: fails, harmlessly, while anything is held in it (and kStateDir
// while a run's private directories are there)
void remove_holding_dir_if_empty(int root_fd, const std::string& run_id) {
  if (unlinkat(root_fd, holding_dir(run_id).c_str(), AT_REMOVEDIR) == 0) unlinkat(root_fd, kStateDir, AT_REMOVEDIR);
}

}  // namespace

std::string holding_dir(const std::string& run_id) {
  return std::string(kStateDir) + (run_id.empty() ? "" : "/" + run_id) + "/removed";
}

std::string held_path(const std::string& run_id, ino_t ino) { return holding_dir(run_id) + "/" + std::to_string(ino); }

void RemovedFiles::keep(bool on, const Confinement& root) {
  std::lock_guard<std::mutex> lock(mu_);
  keep_ = on;
  if (on) return;
  for (auto& [ino, free_after] : held_) unlink_held(root.root_fd(), root.run_id(), ino);
  held_.clear();
  remove_holding_dir_if_empty(root.root_fd(), root.run_id());
}

bool RemovedFiles::keeping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keep_;
}

long RemovedFiles::hold(ProcessTree& tree, const Confinement& root, int parent, const std::string& base) {
  const int root_fd = root.root_fd();
  struct stat st;
  if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return -errno;
  if (!S_ISREG(st.st_mode)) return 1;  // symlinks, sockets, ...: nothing a descriptor reopens
  // .vmha/<run id> is there already (the private directories) when the run has an id
  if (mkdirat(root_fd, kStateDir, 0700) < 0 && errno != EEXIST) return -errno;
  if (mkdirat(root_fd, holding_dir(root.run_id()).c_str(), 0700) < 0 && errno != EEXIST) return -errno;
  const std::string held = held_path(root.run_id(), st.st_ino);
  // EEXIST: another name of this inode is held already.
  if (linkat(parent, base.c_str(), root_fd, held.c_str(), 0) < 0 && errno != EEXIST) return -errno;
  for (auto& p : tree.all())
    for (size_t fd = 0; fd < p->fds.entries().size(); ++fd) {
      FdEntry* e = p->fds.get(static_cast<int>(fd));
      struct stat o;
      if (e && e->kind == FdKind::kFile && fstat(e->host_fd, &o) == 0 && o.st_ino == st.st_ino &&
          o.st_dev == st.st_dev)
        e->path = held;
    }
  held_.try_emplace(st.st_ino, 0);
  return 0;
}

long RemovedFiles::unlink(ProcessTree& tree, const Confinement& root, int parent, const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (keep_) {
    long rc = hold(tree, root, parent, base);
    if (rc < 0) return rc;
  }
  return unlinkat(parent, base.c_str(), 0) < 0 ? -errno : 0;
}

long RemovedFiles::hold_target(ProcessTree& tree, const Confinement& root, int parent, const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keep_) return 0;
  long rc = hold(tree, root, parent, base);
  return rc == -ENOENT || rc > 0 ? 0 : rc;  // nothing there, or nothing to hold
}

void RemovedFiles::checkpointed(const ProcessTree& tree, uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (held_.empty()) return;
  std::set<ino_t> open;
  for (const FileId& f : open_files(tree)) open.insert(f.second);
  for (auto& [ino, free_after] : held_)
    if (free_after == 0 && !open.count(ino)) free_after = epoch;
}

void RemovedFiles::acknowledged(uint64_t epoch, bool finished, const Confinement& root) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    if (finished || (it->second != 0 && it->second <= epoch)) {
      unlink_held(root.root_fd(), root.run_id(), it->first);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  if (finished) remove_holding_dir_if_empty(root.root_fd(), root.run_id());
}

void delete_held_inodes(int root_fd, const std::string& run_id, const std::set<FileId>& open) {
  struct stat root;
  if (fstat(root_fd, &root) < 0) return;
  // held files live on the working directory's file system: an inode number
  // open on another one (a read-only system file) names none of them
  for (const auto& [dev, ino] : open)
    if (dev == root.st_dev) unlink_held(root_fd, run_id, ino);
  remove_holding_dir_if_empty(root_fd, run_id);
}

void delete_held_files(const ProcessTree& tree, const Confinement& root) {
  delete_held_inodes(root.root_fd(), root.run_id(), open_files(tree));
}

}  // namespace vmha
