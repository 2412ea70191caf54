// Path system calls, all confined by the policy (confinement.h): open, stat,
// statx, statfs, unlink, rename, mkdir, readlink, access, getcwd, utimensat,
// chmod, (no) extended attributes. Under a read-only path, what would change
// the file system is refused with EROFS (after the errors a missing file or
// directory gives, as on a read-only mount).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>

#include "vmha/sys/change_undo.h"
#include "vmha/sys/guest_paths.h"
#include "vmha/sys/proc_views.h"
#include "vmha/sys/process_tree.h"
#include "vmha/sys/removed_files.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

constexpr int kAtFdcwd = AT_FDCWD;
// What of the guest's open flags a file under a read-only root keeps (for
// reopening it after a restore).
constexpr int kReadOnlyOpenFlags = O_PATH | O_NOFOLLOW | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_NOATIME;

// Where the guest's (dirfd, path) points, before symlinks that leave its root.
int locate_raw(Process& p, int64_t dirfd, const std::string& path, Resolved* r) {
  if (path.empty()) return -ENOENT;
  if (path[0] == '/' || static_cast<int>(dirfd) == kAtFdcwd) {
    Located l;
    if (int e = p.root.locate(path, &l)) return e;
    r->dir = l.dir;
    r->rel = l.rel;
    r->recorded = l.recorded;
    r->read_only = l.read_only;
    return 0;
  }
  r->rel = path;
  FdEntry* e = p.fds.get(static_cast<int>(dirfd));
  if (!e) return -EBADF;
  if (e->kind != FdKind::kFile && e->kind != FdKind::kReadOnly) return -ENOTDIR;
  r->dir = e->host_fd;
  r->recorded = e->path + "/" + path;
  r->read_only = e->kind == FdKind::kReadOnly;
  return 0;
}

// vmha's own directory (removed files held for a backup, other runs'
// private directories: confinement.h) is outside the policy, as unreachable
// as a path outside every root.
int hidden(Process& p, const Resolved& r) { return !r.read_only && p.root.reserved(r.recorded) ? -EACCES : 0; }

// follow_last: the call follows a symlink in the last component (open
// without O_NOFOLLOW, stat); unlink, rename, readlink, lstat do not. A link
// that leads out of its root is expanded through the policy (confinement.h).
int resolve_string(Process& p, int64_t dirfd, std::string path, bool follow_last, Resolved* r,
                   std::string* raw = nullptr) {
  // A link of /proc/self (proc_views.h) leads where it points; one to a
  // pipe or socket names no path (open() handles those itself).
  if (ProcView v = proc_view(p, path);
      follow_last && v.kind != ProcView::Kind::kNone && v.kind != ProcView::Kind::kFdDir) {
    if (int e = proc_link_target(p, v, &path)) return e;
    if (path.empty() || path[0] != '/') return -ENXIO;
  }
  if (raw) *raw = path;
  if (int e = locate_raw(p, dirfd, path, r)) return e;
  if (!p.root.leaves_root(r->dir, r->rel, follow_last)) return hidden(p, *r);
  Located l{r->dir, r->rel, r->read_only, r->recorded};
  if (int e = p.root.locate_following(p.root.absolute(l), follow_last, &l)) return e;
  *r = Resolved{l.dir, l.rel, l.recorded, l.read_only};
  return hidden(p, *r);
}

int resolve(Process& p, int64_t dirfd, uint64_t path_va, bool follow_last, Resolved* r, std::string* raw = nullptr) {
  std::string path;
  if (int e = p.as->read_string(path_va, path)) return e;
  return resolve_string(p, dirfd, path, follow_last, r, raw);
}

// -EROFS for a change under a read-only root, after what Linux checks first
// on a read-only mount: the object (or, to create it, its directory) exists.
int64_t read_only_change(Process& p, const Resolved& r, bool creates, bool follow = true) {
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH | (follow ? 0 : O_NOFOLLOW), 0);
  if (fd >= 0) {
    close(fd);
    return creates ? -EEXIST : -EROFS;
  }
  if (fd != -ENOENT || !creates) return fd;
  std::string base;
  int parent = p.root.open_parent(r.dir, r.rel, &base);
  if (parent < 0) return parent;
  close(parent);
  return -EROFS;
}

// open of /proc/self/fd (a listing of the descriptors open now) or of
// /proc/self/fd/N for a pipe or inherited stream (the same pipe or stream
// again; a socket cannot be opened so, as on Linux): a guest fd, -errno, or
// 1 when `path` is none of these.
int64_t open_proc_view(Process& p, const std::string& path, int flags, bool follow) {
  ProcView v = proc_view(p, path);
  FdEntry entry;
  entry.cloexec = flags & O_CLOEXEC;
  if (v.kind == ProcView::Kind::kFdDir) {
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT)) return -EISDIR;
    entry.kind = FdKind::kProcFds;
    entry.path = kHostFdDir;
    entry.open_flags = O_RDONLY | O_DIRECTORY;
    entry.host_fd = memfd_create("vmha-proc-fd", MFD_CLOEXEC);
    if (entry.host_fd < 0) return -errno;
  } else if (v.kind == ProcView::Kind::kFdLink && follow) {
    const FdEntry* e = p.fds.get(v.fd);
    if (!e) return -ENOENT;
    if (is_any_socket(e->kind)) return -ENXIO;
    if (e->kind != FdKind::kPipe && e->kind != FdKind::kStdStream) return 1;
    if (flags & O_DIRECTORY) return -ENOTDIR;
    entry = *e;
    entry.cloexec = flags & O_CLOEXEC;
    entry.host_fd = fcntl(e->host_fd, F_DUPFD_CLOEXEC, 0);
    if (entry.host_fd < 0) return -errno;
  } else {
    return 1;
  }
  int g = p.fds.install(entry);
  if (g < 0) {
    close(entry.host_fd);
    return g;
  }
  if (entry.kind == FdKind::kProcFds)
    if (int e = fill_fd_listing(p, entry.host_fd)) {
      p.fds.close(g);
      return e;
    }
  return g;
}

int64_t do_open(Process& p, int64_t dirfd, uint64_t path_va, int flags, unsigned mode) {
  std::string raw;
  Resolved r;
  // O_CREAT|O_EXCL does not follow a symlink in the last component (EEXIST).
  bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
  {
    std::string path;
    if (int e = p.as->read_string(path_va, path)) return e;
    if (int64_t fd = open_proc_view(p, path, flags, follow); fd != 1) return fd;
  }
  int e = resolve(p, dirfd, path_va, follow, &r, &raw);
  FdEntry entry;
  entry.open_flags = flags & ~(O_CLOEXEC | O_TRUNC | O_EXCL | O_CREAT);
  entry.cloexec = flags & O_CLOEXEC;
  if (e == -EACCES && Confinement::is_allowed_device(raw)) {
    int fd = open(raw.c_str(), (flags & (O_ACCMODE | O_NONBLOCK)) | O_CLOEXEC);
    if (fd < 0) return -errno;
    entry.host_fd = fd;
    entry.kind = FdKind::kDevice;
    entry.path = raw;
  } else if (!e && r.read_only) {
    int fd = p.root.open_read_only(r.dir, r.rel, flags);
    if (fd < 0) return fd;
    entry.host_fd = fd;
    entry.kind = FdKind::kReadOnly;
    entry.path = r.recorded;
    entry.open_flags = flags & kReadOnlyOpenFlags;
  } else {
    if (e) return e;
    int host_flags = flags & ~(O_CLOEXEC | 0100000 /* O_LARGEFILE */);
    UndoLog* undo = p.out->undo();
    if (undo && (host_flags & O_CREAT)) {  // a file made now is removed again by a takeover from before
      std::string base;
      int parent = p.root.open_parent(r.dir, r.rel, &base);
      if (parent >= 0) {
        undo->record(undo_create(p.root, parent, base));
        close(parent);
      }
    }
    // Truncating is a file-system change (it may wait for held writes); with
    // a journal, the file is opened first so that what it loses is saved.
    auto open_it = [&] {
      return static_cast<long>(p.root.open_beneath(r.dir, r.rel, undo ? host_flags & ~O_TRUNC : host_flags, mode));
    };
    int fd = static_cast<int>((host_flags & O_TRUNC) && !undo ? p.out->change("truncate " + r.recorded, open_it)
                                                               : open_it());
    if (fd < 0) return fd;
    if ((host_flags & O_TRUNC) && undo) {
      struct stat st;
      long rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0
                    ? p.out->change("truncate " + r.recorded, [&] { return ftruncate(fd, 0) < 0 ? -errno : 0L; },
                                    undo_truncate(*undo, p.root, fd, 0))
                    : 0;
      if (rc < 0) {
        close(fd);
        return rc;
      }
    }
    entry.host_fd = fd;
    entry.kind = FdKind::kFile;
    entry.path = r.recorded;
  }
  int g = p.fds.install(entry);
  if (g < 0) close(entry.host_fd);
  return g;
}

int64_t sys_openat(Process& p, const SyscallArgs& a) {
  return do_open(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int>(a.a[2]), static_cast<unsigned>(a.a[3]));
}
int64_t sys_open(Process& p, const SyscallArgs& a) {
  return do_open(p, kAtFdcwd, a.a[0], static_cast<int>(a.a[1]), static_cast<unsigned>(a.a[2]));
}
int64_t sys_creat(Process& p, const SyscallArgs& a) {
  return do_open(p, kAtFdcwd, a.a[0], O_CREAT | O_WRONLY | O_TRUNC, static_cast<unsigned>(a.a[1]));
}

// Runs a host stat-like call, op(fd, name, at_flags) -> 0 or -errno, on what
// the guest's (dirfd, path, flags) names: the fd itself (AT_EMPTY_PATH and
// an empty path), an allowed device, a symlink itself relative to its
// parent (AT_SYMLINK_NOFOLLOW), or the object beneath its root (O_PATH).
using StatOp = std::function<int(int fd, const char* name, int at_flags)>;
int stat_on_host(Process& p, int64_t dirfd, uint64_t path_va, int flags, const StatOp& op) {
  std::string raw;
  Resolved r;
  int e = resolve(p, dirfd, path_va, !(flags & AT_SYMLINK_NOFOLLOW), &r, &raw);
  if (e == -ENOENT && (flags & AT_EMPTY_PATH) && raw.empty()) {
    FdEntry* f = static_cast<int>(dirfd) == kAtFdcwd ? nullptr : p.fds.get(static_cast<int>(dirfd));
    int host = static_cast<int>(dirfd) == kAtFdcwd ? p.root.cwd_fd() : (f ? f->host_fd : -1);
    if (host < 0) return -EBADF;
    if (f && f->kind == FdKind::kProcFds) return op(AT_FDCWD, kHostFdDir, 0);
    return op(host, "", AT_EMPTY_PATH);
  }
  if (e == -EACCES && Confinement::is_allowed_device(raw)) return op(AT_FDCWD, raw.c_str(), 0);
  if (e == -EACCES && proc_view(p, raw).kind == ProcView::Kind::kFdDir) return op(AT_FDCWD, kHostFdDir, 0);
  // A directory above a root: its metadata only (confinement.h).
  if (e == -EACCES && p.root.above_root(raw)) return op(AT_FDCWD, raw.c_str(), AT_SYMLINK_NOFOLLOW);
  if (e) return e;
  if (flags & AT_SYMLINK_NOFOLLOW) {
    std::string base;
    int parent = p.root.open_parent(r.dir, r.rel, &base);
    if (parent < 0) return parent;
    int rc = op(parent, base.c_str(), AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH);
    close(parent);
    return rc;
  }
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH, 0);
  if (fd < 0) return fd;
  int rc = op(fd, "", AT_EMPTY_PATH);
  close(fd);
  return rc;
}

int64_t do_stat(Process& p, int64_t dirfd, uint64_t path_va, uint64_t out_va, int flags) {
  // Held writes (output commit) count in the size.
  auto host_stat = [&](struct stat* st) {
    return stat_on_host(p, dirfd, path_va, flags, [&](int fd, const char* name, int at_flags) {
      return fstatat(fd, name, st, at_flags) < 0 ? -errno : 0;
    });
  };
  struct stat st;
  if (int rc = p.out->stat_as_guest(host_stat, &st); rc < 0) return rc;
  return p.as->copy_out(out_va, &st, sizeof st) ? 0 : -EFAULT;
}

// statx(dirfd, path, flags, mask, buf), as coreutils' ls and stat call it.
int64_t sys_statx(Process& p, const SyscallArgs& a) {
  int64_t dirfd = static_cast<int64_t>(a.a[0]);
  int flags = static_cast<int>(a.a[2]);
  unsigned mask = static_cast<unsigned>(a.a[3]);
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH | AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE)) return -EINVAL;
  struct statx stx {};
  auto host_stat = [&](struct stat* st) {
    int rc = stat_on_host(p, dirfd, a.a[1], flags, [&](int fd, const char* name, int at_flags) {
      return statx(fd, name, at_flags | (flags & AT_STATX_SYNC_TYPE), mask, &stx) < 0 ? -errno : 0;
    });
    // What the output layer looks at to add held writes to the size.
    st->st_dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    st->st_ino = stx.stx_ino;
    st->st_mode = stx.stx_mode;
    st->st_size = static_cast<off_t>(stx.stx_size);
    return rc;
  };
  struct stat st {};
  if (int rc = p.out->stat_as_guest(host_stat, &st); rc < 0) return rc;
  stx.stx_size = static_cast<uint64_t>(st.st_size);
  return p.as->copy_out(a.a[4], &stx, sizeof stx) ? 0 : -EFAULT;
}

int64_t sys_statfs(Process& p, const SyscallArgs& a) {
  Resolved r;
  if (int e = resolve(p, kAtFdcwd, a.a[0], true, &r)) return e;
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH, 0);
  if (fd < 0) return fd;
  struct statfs sf;
  int rc = fstatfs(fd, &sf) < 0 ? -errno : 0;
  close(fd);
  if (rc < 0) return rc;
  return p.as->copy_out(a.a[1], &sf, sizeof sf) ? 0 : -EFAULT;
}

// getxattr, lgetxattr, listxattr, llistxattr: the guest sees no extended
// attributes (ACLs, security labels), as on a file system without them;
// the path must still name something (ls asks only of what it listed).
int64_t no_xattrs(Process& p, const SyscallArgs& a, bool follow) {
  Resolved r;
  if (int e = resolve(p, kAtFdcwd, a.a[0], follow, &r)) return e;
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH | (follow ? 0 : O_NOFOLLOW), 0);
  if (fd < 0) return fd;
  close(fd);
  return -EOPNOTSUPP;
}
int64_t sys_getxattr(Process& p, const SyscallArgs& a) { return no_xattrs(p, a, true); }
int64_t sys_lgetxattr(Process& p, const SyscallArgs& a) { return no_xattrs(p, a, false); }

int64_t sys_newfstatat(Process& p, const SyscallArgs& a) {
  return do_stat(p, static_cast<int64_t>(a.a[0]), a.a[1], a.a[2], static_cast<int>(a.a[3]));
}
int64_t sys_stat(Process& p, const SyscallArgs& a) { return do_stat(p, kAtFdcwd, a.a[0], a.a[1], 0); }
int64_t sys_lstat(Process& p, const SyscallArgs& a) {
  return do_stat(p, kAtFdcwd, a.a[0], a.a[1], AT_SYMLINK_NOFOLLOW);
}

long op_mkdir(int parent, const char* base, uint64_t mode) {
  return mkdirat(parent, base, static_cast<mode_t>(mode)) < 0 ? -errno : 0;
}

// Calls that change a directory entry go through the output layer, which
// journals what undoes them (made names removed, removed ones brought back).
int64_t in_parent(Process& p, int64_t dirfd, uint64_t path_va, const char* what,
                  const std::function<long(int parent, const std::string& base)>& op, bool creates) {
  Resolved r;
  if (int e = resolve(p, dirfd, path_va, false, &r)) return e;
  if (r.read_only) return read_only_change(p, r, creates, false);
  std::string base;
  int parent = p.root.open_parent(r.dir, r.rel, &base);
  if (parent < 0) return parent;
  long rc = p.out->change(std::string(what) + " " + r.recorded, [&] { return op(parent, base); },
                          creates ? undo_create(p.root, parent, base) : undo_remove(p.root, parent, base));
  close(parent);
  return rc;
}

// A file is unlinked through the tree's RemovedFiles: held while a backup
// may resume from a checkpoint that has it open. Directories are removed.
int64_t do_unlink(Process& p, int64_t dirfd, uint64_t path_va, int flags) {
  return in_parent(p, dirfd, path_va, (flags & AT_REMOVEDIR) ? "rmdir" : "unlink",
                   [&](int parent, const std::string& base) -> long {
                     if ((flags & AT_REMOVEDIR) || !p.tree)
                       return unlinkat(parent, base.c_str(), flags) < 0 ? -errno : 0;
                     return p.tree->removed().unlink(*p.tree, p.root, parent, base);
                   }, false);
}

int64_t sys_unlinkat(Process& p, const SyscallArgs& a) {
  if (a.a[2] & ~uint64_t(AT_REMOVEDIR)) return -EINVAL;
  return do_unlink(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int>(a.a[2]));
}
int64_t sys_unlink(Process& p, const SyscallArgs& a) { return do_unlink(p, kAtFdcwd, a.a[0], 0); }
int64_t sys_rmdir(Process& p, const SyscallArgs& a) { return do_unlink(p, kAtFdcwd, a.a[0], AT_REMOVEDIR); }
int64_t sys_mkdirat(Process& p, const SyscallArgs& a) {
  uint64_t mode = a.a[2];
  return in_parent(p, static_cast<int64_t>(a.a[0]), a.a[1], "mkdir",
                   [&](int parent, const std::string& base) { return op_mkdir(parent, base.c_str(), mode); }, true);
}
int64_t sys_mkdir(Process& p, const SyscallArgs& a) {
  uint64_t mode = a.a[1];
  return in_parent(p, kAtFdcwd, a.a[0], "mkdir",
                   [&](int parent, const std::string& base) { return op_mkdir(parent, base.c_str(), mode); }, true);
}

int64_t do_rename(Process& p, int64_t olddir, uint64_t oldpath, int64_t newdir, uint64_t newpath, unsigned flags) {
  Resolved from, to;
  if (int e = resolve(p, olddir, oldpath, false, &from)) return e;
  if (int e = resolve(p, newdir, newpath, false, &to)) return e;
  if (from.read_only) return read_only_change(p, from, false, false);
  if (to.read_only) return -EROFS;
  std::string from_base, to_base;
  int fp = p.root.open_parent(from.dir, from.rel, &from_base);
  if (fp < 0) return fp;
  int tp = p.root.open_parent(to.dir, to.rel, &to_base);
  if (tp < 0) {
    close(fp);
    return tp;
  }
  long rc = p.out->change(
      "rename " + from.recorded + " " + to.recorded,
      [&] {
        // The file a rename replaces is held like an unlinked one (removed_files.h).
        if (p.tree && !(flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)))
          if (long held = p.tree->removed().hold_target(*p.tree, p.root, tp, to_base); held < 0) return held;
        return syscall(SYS_renameat2, fp, from_base.c_str(), tp, to_base.c_str(), flags) < 0 ? -errno : 0L;
      },
      undo_rename(p.root, fp, from_base, tp, to_base, flags));
  close(fp);
  close(tp);
  return rc;
}

int64_t sys_rename(Process& p, const SyscallArgs& a) { return do_rename(p, kAtFdcwd, a.a[0], kAtFdcwd, a.a[1], 0); }
int64_t sys_renameat(Process& p, const SyscallArgs& a) {
  return do_rename(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int64_t>(a.a[2]), a.a[3], 0);
}
int64_t sys_renameat2(Process& p, const SyscallArgs& a) {
  return do_rename(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int64_t>(a.a[2]), a.a[3],
                   static_cast<unsigned>(a.a[4]));
}

int64_t do_readlink(Process& p, int64_t dirfd, uint64_t path_va, uint64_t buf_va, uint64_t size) {
  if (static_cast<int64_t>(size) <= 0) return -EINVAL;
  std::string path;
  if (int e = p.as->read_string(path_va, path)) return e;
  if (ProcView v = proc_view(p, path); v.kind != ProcView::Kind::kNone) {
    std::string target;
    if (int e = proc_link_target(p, v, &target)) return e;
    size_t n = std::min<size_t>(target.size(), size);
    return p.as->copy_out(buf_va, target.data(), n) ? static_cast<int64_t>(n) : -EFAULT;
  }
  Resolved r;
  if (int e = resolve(p, dirfd, path_va, false, &r)) return e == -EACCES && p.root.above_root(path) ? -EINVAL : e;
  std::string base;
  int parent = p.root.open_parent(r.dir, r.rel, &base);
  if (parent < 0) return parent;
  char buf[4096];
  ssize_t n = readlinkat(parent, base.c_str(), buf, sizeof buf);
  int err = errno;
  close(parent);
  if (n < 0) return -err;
  n = std::min<ssize_t>(n, static_cast<ssize_t>(size));
  return p.as->copy_out(buf_va, buf, n) ? n : -EFAULT;
}

int64_t sys_readlinkat(Process& p, const SyscallArgs& a) {
  return do_readlink(p, static_cast<int64_t>(a.a[0]), a.a[1], a.a[2], a.a[3]);
}
int64_t sys_readlink(Process& p, const SyscallArgs& a) { return do_readlink(p, kAtFdcwd, a.a[0], a.a[1], a.a[2]); }

int64_t do_access(Process& p, int64_t dirfd, uint64_t path_va, int mode, int flags) {
  std::string raw;
  Resolved r;
  int e = resolve(p, dirfd, path_va, !(flags & AT_SYMLINK_NOFOLLOW), &r, &raw);
  if (e == -EACCES && Confinement::is_allowed_device(raw)) return access(raw.c_str(), mode) < 0 ? -errno : 0;
  if (e) return e;
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0), 0);
  if (fd < 0) return fd;
  if (r.read_only && (mode & W_OK)) {
    close(fd);
    return -EROFS;
  }
  long rc = syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | (flags & AT_EACCESS));
  int err = errno;
  close(fd);
  return rc < 0 ? -err : 0;
}

int64_t sys_access(Process& p, const SyscallArgs& a) {
  return do_access(p, kAtFdcwd, a.a[0], static_cast<int>(a.a[1]), 0);
}
int64_t sys_faccessat(Process& p, const SyscallArgs& a) {
  return do_access(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int>(a.a[2]), 0);
}
int64_t sys_faccessat2(Process& p, const SyscallArgs& a) {
  return do_access(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int>(a.a[2]), static_cast<int>(a.a[3]));
}

int64_t sys_getcwd(Process& p, const SyscallArgs& a) {
  const std::string cwd = p.root.guest_path(p.root.cwd().recorded, p.root.cwd().read_only);
  if (a.a[1] < cwd.size() + 1) return -ERANGE;
  return p.as->copy_out(a.a[0], cwd.c_str(), cwd.size() + 1) ? static_cast<int64_t>(cwd.size() + 1) : -EFAULT;
}

// chdir, fchdir: the process's working directory (confinement.h), which
// relative paths resolve against from now on; a forked child inherits it.
int64_t sys_chdir(Process& p, const SyscallArgs& a) {
  Resolved r;
  if (int e = resolve(p, kAtFdcwd, a.a[0], true, &r)) return e;
  return p.root.change_dir(Located{r.dir, r.rel, r.read_only, r.recorded});
}

int64_t sys_fchdir(Process& p, const SyscallArgs& a) {
  const FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind != FdKind::kFile && e->kind != FdKind::kReadOnly) return -ENOTDIR;
  return p.root.change_dir(Located{e->host_fd, ".", e->kind == FdKind::kReadOnly, e->path});
}

int64_t sys_utimensat(Process& p, const SyscallArgs& a) {
  timespec ts[2];
  bool has_times = a.a[2] != 0;
  if (has_times && !p.as->copy_in(ts, a.a[2], sizeof ts)) return -EFAULT;
  int flags = static_cast<int>(a.a[3]);
  if (a.a[1] == 0) {  // futimens
    FdEntry* e = p.fds.get(static_cast<int>(a.a[0]));
    if (!e) return -EBADF;
    if (e->kind == FdKind::kReadOnly) return -EROFS;
    if (!may_change_metadata(*e)) return -EPERM;  // as fchmod (file_calls.cc)
    int host = e->host_fd;
    return p.out->change("utimens " + e->path,
                         [&] { return futimens(host, has_times ? ts : nullptr) < 0 ? -errno : 0L; },
                         undo_attributes(p.root, host, ""));
  }
  Resolved r;
  if (int e = resolve(p, static_cast<int64_t>(a.a[0]), a.a[1], !(flags & AT_SYMLINK_NOFOLLOW), &r)) return e;
  if (r.read_only) return read_only_change(p, r, false, !(flags & AT_SYMLINK_NOFOLLOW));
  std::string base;
  int parent = p.root.open_parent(r.dir, r.rel, &base);
  if (parent < 0) return parent;
  long rc = p.out->change(
      "utimens " + r.recorded,
      [&] {
        return utimensat(parent, base.c_str(), has_times ? ts : nullptr, flags | AT_SYMLINK_NOFOLLOW) < 0 ? -errno
                                                                                                           : 0L;
      },
      undo_attributes(p.root, parent, base));
  close(parent);
  return rc;
}

int64_t do_chmod(Process& p, int64_t dirfd, uint64_t path_va, mode_t mode) {
  Resolved r;
  if (int e = resolve(p, dirfd, path_va, true, &r)) return e;
  if (r.read_only) return read_only_change(p, r, false);
  int fd = p.root.open_beneath(r.dir, r.rel, O_PATH, 0);
  if (fd < 0) return fd;
  std::string proc = "/proc/self/fd/" + std::to_string(fd);  // chmod through the O_PATH fd
  long rc = p.out->change("chmod " + r.recorded, [&] { return chmod(proc.c_str(), mode) < 0 ? -errno : 0L; },
                          undo_attributes(p.root, fd, ""));
  close(fd);
  return rc;
}

int64_t sys_chmod(Process& p, const SyscallArgs& a) {
  return do_chmod(p, kAtFdcwd, a.a[0], static_cast<mode_t>(a.a[1]));
}
int64_t sys_fchmodat(Process& p, const SyscallArgs& a) {
  return do_chmod(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<mode_t>(a.a[2]));
}

const SyscallDef kDefs[] = {
    {SYS_openat, "openat", sys_openat},
    {SYS_open, "open", sys_open},
    {SYS_creat, "creat", sys_creat},
    {SYS_newfstatat, "newfstatat", sys_newfstatat},
    {SYS_stat, "stat", sys_stat},
    {SYS_lstat, "lstat", sys_lstat},
    {SYS_statx, "statx", sys_statx},
    {SYS_statfs, "statfs", sys_statfs},
    {SYS_getxattr, "getxattr", sys_getxattr},
    {SYS_lgetxattr, "lgetxattr", sys_lgetxattr},
    {SYS_listxattr, "listxattr", sys_getxattr},
    {SYS_llistxattr, "llistxattr", sys_lgetxattr},
    {SYS_unlinkat, "unlinkat", sys_unlinkat},
    {SYS_unlink, "unlink", sys_unlink},
    {SYS_rmdir, "rmdir", sys_rmdir},
    {SYS_mkdirat, "mkdirat", sys_mkdirat},
    {SYS_mkdir, "mkdir", sys_mkdir},
    {SYS_rename, "rename", sys_rename},
    {SYS_renameat, "renameat", sys_renameat},
    {SYS_renameat2, "renameat2", sys_renameat2},
    {SYS_readlinkat, "readlinkat", sys_readlinkat},
    {SYS_readlink, "readlink", sys_readlink},
    {SYS_access, "access", sys_access},
    {SYS_faccessat, "faccessat", sys_faccessat},
    {SYS_faccessat2, "faccessat2", sys_faccessat2},
    {SYS_getcwd, "getcwd", sys_getcwd},
    {SYS_chdir, "chdir", sys_chdir},
    {SYS_fchdir, "fchdir", sys_fchdir},
    {SYS_utimensat, "utimensat", sys_utimensat},
    {SYS_chmod, "chmod", sys_chmod},
    {SYS_fchmodat, "fchmodat", sys_fchmodat},
};

}  // namespace

int resolve_guest_path(Process& p, const std::string& path, bool follow_last, Resolved* out) {
  return resolve_string(p, AT_FDCWD, path, follow_last, out);
}

int resolve_guest_at(Process& p, int64_t dirfd, uint64_t path_va, bool follow_last, Resolved* out) {
  return resolve(p, dirfd, path_va, follow_last, out);
}

int64_t change_in_parent(Process& p, int64_t dirfd, uint64_t path_va, const char* what,
                         const std::function<long(int parent, const std::string& base)>& op, bool creates) {
  return in_parent(p, dirfd, path_va, what, op, creates);
}

std::span<const SyscallDef> path_syscalls() { return kDefs; }

}  // namespace vmha
