// Links and ownership: symlink, symlinkat, link, linkat, chown, lchown,
// fchown, fchownat. New links are made beneath the working directory (or a
// private directory) only; a symlink's target is stored as given and, like
// any link, resolved through the policy when followed (confinement.h). A
// hard link never joins a read-only file to the working directory (EXDEV,
// as across mounts). Ownership changes only to the user's own ids: what
// Linux allows a process without CAP_CHOWN (vmha may run as root: the guest
// gets no more than a job's user).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "vmha/sys/change_undo.h"
#include "vmha/sys/guest_paths.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

int64_t do_symlink(Process& p, uint64_t target_va, int64_t dirfd, uint64_t path_va) {
  std::string target;
  if (int e = p.as->read_string(target_va, target)) return e;
  if (target.empty()) return -ENOENT;
  return change_in_parent(
      p, dirfd, path_va, "symlink",
      [&](int parent, const std::string& base) -> long {
        return symlinkat(target.c_str(), parent, base.c_str()) < 0 ? -errno : 0;
      },
      true);
}

int64_t sys_symlink(Process& p, const SyscallArgs& a) { return do_symlink(p, a.a[0], AT_FDCWD, a.a[1]); }
int64_t sys_symlinkat(Process& p, const SyscallArgs& a) {
  return do_symlink(p, a.a[0], static_cast<int64_t>(a.a[1]), a.a[2]);
}

int64_t do_link(Process& p, int64_t olddir, uint64_t oldpath, int64_t newdir, uint64_t newpath, int flags) {
  if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)) return -EINVAL;
  if (flags & AT_EMPTY_PATH) return -ENOENT;  // linking an open file by its fd: not offered
  Resolved from;
  if (int e = resolve_guest_at(p, olddir, oldpath, flags & AT_SYMLINK_FOLLOW, &from)) return e;
  if (from.read_only) return -EXDEV;
  std::string from_base;
  int fp = p.root.open_parent(from.dir, from.rel, &from_base);
  if (fp < 0) return fp;
  int64_t rc = change_in_parent(
      p, newdir, newpath, "link",
      [&](int parent, const std::string& base) -> long {
        return linkat(fp, from_base.c_str(), parent, base.c_str(), 0) < 0 ? -errno : 0;
      },
      true);
  close(fp);
  return rc == -EROFS ? -EXDEV : rc;
}

int64_t sys_link(Process& p, const SyscallArgs& a) { return do_link(p, AT_FDCWD, a.a[0], AT_FDCWD, a.a[1], 0); }
int64_t sys_linkat(Process& p, const SyscallArgs& a) {
  return do_link(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<int64_t>(a.a[2]), a.a[3],
                 static_cast<int>(a.a[4]));
}

// Only to the user's own uid and to a group it is in (-1: unchanged).
bool own_ids(uid_t uid, gid_t gid) {
  if (uid != static_cast<uid_t>(-1) && uid != geteuid()) return false;
  if (gid == static_cast<gid_t>(-1) || gid == getegid()) return true;
  std::vector<gid_t> groups(static_cast<size_t>(getgroups(0, nullptr) > 0 ? getgroups(0, nullptr) : 0));
  int n = groups.empty() ? 0 : getgroups(static_cast<int>(groups.size()), groups.data());
  for (int i = 0; i < n; ++i)
    if (groups[static_cast<size_t>(i)] == gid) return true;
  return false;
}

int64_t do_chown(Process& p, int64_t dirfd, uint64_t path_va, uid_t uid, gid_t gid, int flags) {
  if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) return -EINVAL;
  Resolved r;
  if (int e = resolve_guest_at(p, dirfd, path_va, !(flags & AT_SYMLINK_NOFOLLOW), &r)) return e;
  if (r.read_only) return -EROFS;
  if (!own_ids(uid, gid)) return -EPERM;
  std::string base;
  int parent = p.root.open_parent(r.dir, r.rel, &base);
  if (parent < 0) return parent;
  long rc = p.out->change(
      "chown " + r.recorded,
      [&] { return fchownat(parent, base.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0L; },
      undo_attributes(p.root, parent, base));
  close(parent);
  return rc;
}

int64_t sys_chown(Process& p, const SyscallArgs& a) {
  return do_chown(p, AT_FDCWD, a.a[0], static_cast<uid_t>(a.a[1]), static_cast<gid_t>(a.a[2]), 0);
}
int64_t sys_lchown(Process& p, const SyscallArgs& a) {
  return do_chown(p, AT_FDCWD, a.a[0], static_cast<uid_t>(a.a[1]), static_cast<gid_t>(a.a[2]), AT_SYMLINK_NOFOLLOW);
}
int64_t sys_fchownat(Process& p, const SyscallArgs& a) {
  return do_chown(p, static_cast<int64_t>(a.a[0]), a.a[1], static_cast<uid_t>(a.a[2]), static_cast<gid_t>(a.a[3]),
                  static_cast<int>(a.a[4]));
}

int64_t sys_fchown(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind == FdKind::kReadOnly) return -EROFS;
  const uid_t uid = static_cast<uid_t>(a.a[1]);
  const gid_t gid = static_cast<gid_t>(a.a[2]);
  if (!may_change_metadata(*e) || !own_ids(uid, gid)) return -EPERM;
  int host = e->host_fd;
  return p.out->change("fchown " + e->path, [=] { return fchown(host, uid, gid) < 0 ? -errno : 0L; },
                       undo_attributes(p.root, host, ""));
}

const SyscallDef kDefs[] = {
    {SYS_symlink, "symlink", sys_symlink}, {SYS_symlinkat, "symlinkat", sys_symlinkat},
    {SYS_link, "link", sys_link},          {SYS_linkat, "linkat", sys_linkat},
    {SYS_chown, "chown", sys_chown},       {SYS_lchown, "lchown", sys_lchown},
    {SYS_fchownat, "fchownat", sys_fchownat}, {SYS_fchown, "fchown", sys_fchown},
};

}  // namespace

std::span<const SyscallDef> link_syscalls() { return kDefs; }

}  // namespace vmha
