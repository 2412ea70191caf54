#include "vmha/sys/change_undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "vmha/sys/path_parts.h"
#include "vmha/sys/removed_files.h"

namespace vmha {

namespace {

// The working-directory-relative path of (parent, base), "" outside it.
std::string path_of(const Confinement& root, int parent, const std::string& base) {
  char host[PATH_MAX];
  ssize_t n = readlink(("/proc/self/fd/" + std::to_string(parent)).c_str(), host, sizeof host - 1);
  if (n <= 0) return "";
  host[n] = 0;
  const std::vector<std::string> h = path_components(host), r = path_components(root.root_path());
  if (h.size() < r.size()) return "";
  for (size_t i = 0; i < r.size(); ++i)
    if (h[i] != r[i]) return "";
  const std::string dir = join_components(h, r.size());
  if (base.empty()) return dir == "." ? "" : dir;
  return dir == "." ? base : dir + "/" + base;
}

int64_t ns_of(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

// What brings back the object (parent, base) that exists now, at `path`.
std::vector<UndoStep> restore_steps(const Confinement& root, int parent, const std::string& base,
                                    const std::string& path) {
  struct stat st;
  if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
  UndoStep s;
  if (S_ISREG(st.st_mode)) {
    // RemovedFiles links it there before the change (a backup protects the run).
    s.kind = UndoStep::Kind::kLink;
    s.a = held_path(root.run_id(), st.st_ino);
    s.b = path;
  } else if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(parent, base.c_str(), target, sizeof target);
    if (n <= 0) return {};
    s.kind = UndoStep::Kind::kSymlink;
    s.a.assign(target, static_cast<size_t>(n));
    s.b = path;
  } else if (S_ISDIR(st.st_mode)) {
    s.kind = UndoStep::Kind::kMkdir;
    s.a = path;
    s.mode = st.st_mode & 07777;
  } else {
    return {};  // a FIFO or socket: nothing a process of the job relies on after a takeover
  }
  return {s};
}

}  // namespace

UndoPrepare undo_create(const Confinement& root, int parent, const std::string& base) {
  return [&root, parent, base] {
    struct stat st;
    if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) return std::vector<UndoStep>{};
    const std::string path = path_of(root, parent, base);
    if (path.empty()) return std::vector<UndoStep>{};
    UndoStep s;
    s.kind = UndoStep::Kind::kRemove;
    s.a = path;
    return std::vector<UndoStep>{s};
  };
}

UndoPrepare undo_remove(const Confinement& root, int parent, const std::string& base) {
  return [&root, parent, base] {
    const std::string path = path_of(root, parent, base);
    return path.empty() ? std::vector<UndoStep>{} : restore_steps(root, parent, base, path);
  };
}

UndoPrepare undo_rename(const Confinement& root, int from_parent, const std::string& from_base, int to_parent,
                        const std::string& to_base, unsigned flags) {
  return [&root, from_parent, from_base, to_parent, to_base, flags] {
    const std::string from = path_of(root, from_parent, from_base), to = path_of(root, to_parent, to_base);
    if (from.empty() || to.empty()) return std::vector<UndoStep>{};
    UndoStep back;
    back.a = to;
    back.b = from;
    if (flags & RENAME_EXCHANGE) {
      back.kind = UndoStep::Kind::kExchange;
      return std::vector<UndoStep>{back};
    }
    // Undone newest first: moved back, then what it replaced brought back.
    std::vector<UndoStep> steps = restore_steps(root, to_parent, to_base, to);
    back.kind = UndoStep::Kind::kRename;
    steps.push_back(back);
    return steps;
  };
}

UndoPrepare undo_truncate(UndoLog& log, const Confinement& root, int fd, uint64_t size) {
  return [&log, &root, fd, size] {
    struct stat st;
    const std::string path = path_of(root, fd, "");
    if (path.empty() || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::vector<UndoStep>{};
    const uint64_t old = static_cast<uint64_t>(st.st_size);
    if (old == size) return std::vector<UndoStep>{};
    UndoStep s;
    s.kind = UndoStep::Kind::kRestoreTail;
    s.a = path;
    s.offset = size;
    s.size = old;
    if (old > size && (s.b = log.save_bytes(fd, size, old)).empty()) return std::vector<UndoStep>{};
    return std::vector<UndoStep>{s};
  };
}

UndoPrepare undo_attributes(const Confinement& root, int parent, const std::string& base) {
  return [&root, parent, base] {
    struct stat st;
    if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) != 0) return std::vector<UndoStep>{};
    UndoStep s;
    s.kind = UndoStep::Kind::kAttributes;
    s.a = path_of(root, parent, base);
    if (s.a.empty()) return std::vector<UndoStep>{};
    s.mode = st.st_mode & 07777;
    s.uid = st.st_uid;
    s.gid = st.st_gid;
    s.atime_ns = ns_of(st.st_atim);
    s.mtime_ns = ns_of(st.st_mtim);
    return std::vector<UndoStep>{s};
  };
}

}  // namespace vmha
