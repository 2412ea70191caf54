#include "vmha/sys/removed_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <set>
#include <vector>

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

void unlink_held(int root_fd, ino_t ino) { unlinkat(root_fd, held_path(ino).c_str(), 0); }
// rmdir: fails, harmlessly, while anything is held in it
void remove_holding_dir_if_empty(int root_fd) { unlinkat(root_fd, kHoldingDir, AT_REMOVEDIR); }

}  // namespace

bool in_holding_dir(const std::string& recorded) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= recorded.size()) {
    size_t j = recorded.find('/', i);
    if (j == std::string::npos) j = recorded.size();
    std::string c = recorded.substr(i, j - i);
    if (c == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!c.empty() && c != ".") {
      parts.push_back(c);
    }
    i = j + 1;
  }
  return !parts.empty() && parts.front() == kHoldingDir;
}

std::string held_path(ino_t ino) { return std::string(kHoldingDir) + "/" + std::to_string(ino); }

void RemovedFiles::keep(bool on, int root_fd) {
  std::lock_guard<std::mutex> lock(mu_);
  keep_ = on;
  if (on) return;
  for (auto& [ino, free_after] : held_) unlink_held(root_fd, ino);
  held_.clear();
  remove_holding_dir_if_empty(root_fd);
}

bool RemovedFiles::keeping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return keep_;
}

long RemovedFiles::hold(ProcessTree& tree, int root_fd, int parent, const std::string& base) {
  struct stat st;
  if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) < 0) return -errno;
  if (!S_ISREG(st.st_mode)) return 1;  // symlinks, sockets, ...: nothing a descriptor reopens
  if (mkdirat(root_fd, kHoldingDir, 0700) < 0 && errno != EEXIST) return -errno;
  const std::string held = held_path(st.st_ino);
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

long RemovedFiles::unlink(ProcessTree& tree, int root_fd, int parent, const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (keep_) {
    long rc = hold(tree, root_fd, parent, base);
    if (rc < 0) return rc;
  }
  return unlinkat(parent, base.c_str(), 0) < 0 ? -errno : 0;
}

long RemovedFiles::hold_target(ProcessTree& tree, int root_fd, int parent, const std::string& base) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keep_) return 0;
  long rc = hold(tree, root_fd, parent, base);
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

void RemovedFiles::acknowledged(uint64_t epoch, bool finished, int root_fd) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    if (finished || (it->second != 0 && it->second <= epoch)) {
      unlink_held(root_fd, it->first);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  if (finished) remove_holding_dir_if_empty(root_fd);
}

void delete_held_inodes(int root_fd, const std::set<FileId>& open) {
  struct stat root;
  if (fstat(root_fd, &root) < 0) return;
  // held files live on the working directory's file system: an inode number
  // open on another one (a read-only system file) names none of them
  for (const auto& [dev, ino] : open)
    if (dev == root.st_dev) unlink_held(root_fd, ino);
  remove_holding_dir_if_empty(root_fd);
}

void delete_held_files(const ProcessTree& tree, int root_fd) { delete_held_inodes(root_fd, open_files(tree)); }

}  // namespace vmha
