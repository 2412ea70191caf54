// File-descriptor system calls: read/write and friends, seek, stat and
// statfs of an fd, directory listing, fcntl/dup, pipes and socketpairs inside the VM, poll.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "vmha/common/iov_io.h"
#include "vmha/sys/change_undo.h"
#include "vmha/sys/guest_io.h"
#include "vmha/sys/proc_views.h"
#include "vmha/sys/process_tree.h"
#include "vmha/sys/removed_files.h"
#include "vmha/sys/signal_kick.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

// A file with held writes (output commit) is read only after their release.
bool must_wait(Process& p, const FdEntry& e) { return e.kind == FdKind::kFile && p.out->must_wait(e.host_fd); }

// O_NONBLOCK set by the guest on an inherited stream is not set on the host
// (see kSetflFlags): a read that would wait returns EAGAIN here instead.
bool stream_would_block(const FdEntry& e) {
  if (e.kind != FdKind::kStdStream || !(e.open_flags & O_NONBLOCK)) return false;
  pollfd pfd{e.host_fd, POLLIN, 0};
  return poll(&pfd, 1, 0) == 0;
}

int64_t read_into(Process& p, int fd, std::vector<iovec>& iov, off_t offset) {
  FdEntry* e = p.fds.get(fd);
  if (!e) return -EBADF;
  if (e->kind == FdKind::kProcFds) return -EISDIR;
  if (e->kind == FdKind::kUnixListener) return -EINVAL;  // its host fd is an eventfd (unix_names.h)
  if (must_wait(p, *e)) return kWaitForRelease;
  if (stream_would_block(*e)) return -EAGAIN;
  if (offset < 0 && would_yield(p, *e, POLLIN)) return kRetryLater;
  ssize_t n = read_pieces(e->host_fd, iov, offset);
  // A blocking read (pipe, terminal) cut by an epoch pause read nothing: it
  // restarts after the pause instead of returning EINTR to the guest.
  if (n < 0 && errno == EINTR) return kWaitForRelease;
  if (n < 0) return -errno;
  p.as->note_written(iov, n);
  return n;
}

int64_t sys_read(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!p.as->gather(a.a[1], a.a[2], true, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return read_into(p, fd_arg(a, 0), iov, -1);
}

int64_t sys_pread64(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (static_cast<int64_t>(a.a[3]) < 0) return -EINVAL;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!p.as->gather(a.a[1], a.a[2], true, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return read_into(p, fd_arg(a, 0), iov, static_cast<off_t>(a.a[3]));
}

int64_t sys_readv(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!gather_guest_iovec(p, a.a[1], a.a[2], true, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return read_into(p, fd_arg(a, 0), iov, -1);
}

int64_t sys_write(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!p.as->gather(a.a[1], a.a[2], false, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return write_for_guest(p, fd_arg(a, 0), iov, -1);
}

int64_t sys_pwrite64(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (static_cast<int64_t>(a.a[3]) < 0) return -EINVAL;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!p.as->gather(a.a[1], a.a[2], false, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return write_for_guest(p, fd_arg(a, 0), iov, static_cast<off_t>(a.a[3]));
}

int64_t sys_writev(Process& p, const SyscallArgs& a) {
  std::vector<iovec> iov;
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (!gather_guest_iovec(p, a.a[1], a.a[2], false, iov)) return -EFAULT;
  if (iov.empty()) return 0;
  return write_for_guest(p, fd_arg(a, 0), iov, -1);
}

int64_t sys_lseek(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  off_t off = static_cast<off_t>(a.a[1]);
  int whence = static_cast<int>(a.a[2]);
  if (e->kind == FdKind::kFile && p.out->holds_files()) {
    if ((whence == SEEK_DATA || whence == SEEK_HOLE) && p.out->must_wait(e->host_fd)) return kWaitForRelease;
    struct stat st;
    const int fd = e->host_fd;
    if (whence == SEEK_END &&
        p.out->stat_as_guest([fd](struct stat* s) { return fstat(fd, s) < 0 ? -errno : 0; }, &st) == 0 &&
        S_ISREG(st.st_mode)) {  // the end includes held writes
      if (off < -st.st_size) return -EINVAL;
      off += st.st_size;
      whence = SEEK_SET;
    }
  }
  off_t r = lseek(e->host_fd, off, whence);
  return r < 0 ? -errno : r;
}

int64_t sys_close(Process& p, const SyscallArgs& a) { return p.fds.close(fd_arg(a, 0)); }

int64_t sys_fstat(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  struct stat st;
  if (e->kind == FdKind::kProcFds) {
    if (stat(kHostFdDir, &st) < 0) return -errno;
    return p.as->copy_out(a.a[1], &st, sizeof st) ? 0 : -EFAULT;
  }
  const int fd = e->host_fd;
  if (int rc = p.out->stat_as_guest([fd](struct stat* s) { return fstat(fd, s) < 0 ? -errno : 0; }, &st); rc < 0)
    return rc;
  return p.as->copy_out(a.a[1], &st, sizeof st) ? 0 : -EFAULT;
}

int64_t sys_fstatfs(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  struct statfs sf;
  if (fstatfs(e->host_fd, &sf) < 0) return -errno;
  return p.as->copy_out(a.a[1], &sf, sizeof sf) ? 0 : -EFAULT;
}

// fgetxattr, flistxattr: no extended attributes (path_calls.cc).
int64_t sys_fgetxattr(Process& p, const SyscallArgs& a) { return p.fds.get(fd_arg(a, 0)) ? -EOPNOTSUPP : -EBADF; }

// Drops vmha's own directory (confinement.h's kStateDir) from a listing of
// the working directory. Returns the new length.
long without_state_dir(Process& p, int host_fd, char* buf, long n) {
  if (!memmem(buf, static_cast<size_t>(n), kStateDir, std::strlen(kStateDir))) return n;
  struct stat dir, root;
  if (fstat(host_fd, &dir) != 0 || fstat(p.root.root_fd(), &root) != 0 || dir.st_ino != root.st_ino ||
      dir.st_dev != root.st_dev)
    return n;
  for (long at = 0; at < n;) {
    auto* d = reinterpret_cast<dirent64*>(buf + at);
    if (std::strcmp(d->d_name, kStateDir) != 0) {
      at += d->d_reclen;
      continue;
    }
    long len = d->d_reclen;
    std::memmove(buf + at, buf + at + len, static_cast<size_t>(n - at - len));
    n -= len;
  }
  return n;
}

int64_t sys_getdents64(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  std::vector<char> buf(std::min<uint64_t>(a.a[2], 1 << 20));
  long n;
  if (e->kind == FdKind::kProcFds) {
    n = read_fd_listing(e->host_fd, buf.data(), buf.size());
    if (n <= 0) return n;
    return p.as->copy_out(a.a[1], buf.data(), n) ? n : -EFAULT;
  }
  do {  // a batch of only the hidden entry is not the end of the directory
    n = syscall(SYS_getdents64, e->host_fd, buf.data(), buf.size());
    if (n < 0) return -errno;
    if (n == 0) break;
    n = without_state_dir(p, e->host_fd, buf.data(), n);
  } while (n == 0);
  return p.as->copy_out(a.a[1], buf.data(), n) ? n : -EFAULT;
}

int64_t sys_fcntl(Process& p, const SyscallArgs& a);

// Terminal queries (isatty, window size), bytes waiting, and the flags
// fcntl sets too (Python's setblocking uses FIONBIO); the rest is not the
// guest's business.
int64_t sys_ioctl(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  uint64_t req = a.a[1];
  if (req == FIONBIO) {
    int on = 0;
    if (!p.as->copy_in(&on, a.a[2], sizeof on)) return -EFAULT;
    int64_t flags = sys_fcntl(p, SyscallArgs{SYS_fcntl, {a.a[0], F_GETFL}});
    if (flags < 0) return flags;
    flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
    return sys_fcntl(p, SyscallArgs{SYS_fcntl, {a.a[0], F_SETFL, static_cast<uint64_t>(flags)}});
  }
  if (req == FIOCLEX || req == FIONCLEX) {
    e->cloexec = req == FIOCLEX;
    return 0;
  }
  if (req == TCGETS || req == TIOCGWINSZ) {
    char buf[64];
    if (ioctl(e->host_fd, req, buf) < 0) return -errno;
    size_t size = req == TCGETS ? 36 : sizeof(winsize);  // kernel struct termios is 36 bytes
    return p.as->copy_out(a.a[2], buf, size) ? 0 : -EFAULT;
  }
  if (req == FIONREAD) {
    int n = 0;
    if (ioctl(e->host_fd, FIONREAD, &n) < 0) return -errno;
    return p.as->copy_out(a.a[2], &n, sizeof n) ? 0 : -EFAULT;
  }
  return -ENOTTY;
}

int64_t dup_to(Process& p, int oldfd, int newfd, bool cloexec, bool at_least) {
  FdEntry* e = p.fds.get(oldfd);
  if (!e) return -EBADF;
  p.fds.share(*e);
  FdEntry copy = *e;
  copy.host_fd = fcntl(e->host_fd, F_DUPFD_CLOEXEC, 0);
  if (copy.host_fd < 0) return -errno;
  copy.cloexec = cloexec;
  int r = at_least ? p.fds.install(copy, newfd) : p.fds.install_at(newfd, copy);
  if (r < 0) close(copy.host_fd);
  return r;
}

int64_t sys_dup(Process& p, const SyscallArgs& a) { return dup_to(p, fd_arg(a, 0), 0, false, true); }

int64_t sys_dup2(Process& p, const SyscallArgs& a) {
  if (!p.fds.get(fd_arg(a, 0))) return -EBADF;
  if (fd_arg(a, 0) == fd_arg(a, 1)) return fd_arg(a, 1);
  return dup_to(p, fd_arg(a, 0), fd_arg(a, 1), false, false);
}

int64_t sys_dup3(Process& p, const SyscallArgs& a) {
  if (fd_arg(a, 0) == fd_arg(a, 1)) return -EINVAL;
  return dup_to(p, fd_arg(a, 0), fd_arg(a, 1), a.a[2] & O_CLOEXEC, false);
}

// F_SETFL on an inherited stream: recorded for every guest fd of that stream
// (dups share flags, as they share an open file description), never set on
// the host description that the processes outside the VM use too. The same
// for a listener, whose host description is the VMM's own eventfd.
int64_t set_virtual_flags(Process& p, const FdEntry& e, int flags) {
  for (int fd = 0; fd < static_cast<int>(p.fds.entries().size()); ++fd) {
    FdEntry* s = p.fds.get(fd);
    if (s && s->kind == e.kind &&
        (e.kind == FdKind::kStdStream ? s->stream == e.stream : s->channel == e.channel))
      s->open_flags = (s->open_flags & ~kSetflFlags) | (flags & kSetflFlags);
  }
  return 0;
}

bool virtual_flags(const FdEntry& e) { return e.kind == FdKind::kStdStream || e.kind == FdKind::kUnixListener; }

int64_t sys_fcntl(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  int cmd = static_cast<int>(a.a[1]);
  switch (cmd) {
    case F_DUPFD:
      return dup_to(p, fd_arg(a, 0), static_cast<int>(a.a[2]), false, true);
    case F_DUPFD_CLOEXEC:
      return dup_to(p, fd_arg(a, 0), static_cast<int>(a.a[2]), true, true);
    case F_GETFD:
      return e->cloexec ? FD_CLOEXEC : 0;
    case F_SETFD:
      e->cloexec = a.a[2] & FD_CLOEXEC;
      return 0;
    case F_GETFL: {
      int r = fcntl(e->host_fd, F_GETFL);
      if (r < 0) return -errno;
      return virtual_flags(*e) ? (r & ~kSetflFlags) | (e->open_flags & kSetflFlags) : r;
    }
    case F_SETFL:
      if (virtual_flags(*e)) return set_virtual_flags(p, *e, static_cast<int>(a.a[2]));
      return fcntl(e->host_fd, F_SETFL, static_cast<int>(a.a[2])) < 0 ? -errno : 0;
    case F_GETLK:
    case F_SETLK:
    case F_SETLKW:
      return 0;  // one process: locks always succeed
    default:
      return -EINVAL;
  }
}

// type: a socketpair's type name (socket_type_name), "" for a pipe.
int64_t make_pair(Process& p, uint64_t out_va, int host[2], FdKind kind, bool cloexec, const std::string& type = "") {
  int ch = p.fds.next_channel();
  FdEntry e0{host[0], kind, type, 0, cloexec, -1, ch, 0};
  FdEntry e1{host[1], kind, type, 0, cloexec, -1, ch, 1};
  int g0 = p.fds.install(e0), g1 = g0 < 0 ? g0 : p.fds.install(e1);
  if (g0 < 0 || g1 < 0) {
    if (g0 >= 0)
      p.fds.close(g0);
    else
      close(host[0]);
    close(host[1]);
    return -EMFILE;
  }
  int guest[2] = {g0, g1};
  if (!p.as->copy_out(out_va, guest, sizeof guest)) {
    p.fds.close(g0);
    p.fds.close(g1);
    return -EFAULT;
  }
  return 0;
}

int64_t sys_pipe2(Process& p, const SyscallArgs& a) {
  int host[2];
  int flags = static_cast<int>(a.a[1]);
  if (pipe2(host, (flags & ~O_CLOEXEC) | O_CLOEXEC) < 0) return -errno;
  return make_pair(p, a.a[0], host, FdKind::kPipe, flags & O_CLOEXEC);
}

int64_t sys_pipe(Process& p, const SyscallArgs& a) {
  SyscallArgs b = a;
  b.a[1] = 0;
  return sys_pipe2(p, b);
}

int64_t sys_socketpair(Process& p, const SyscallArgs& a) {
  int domain = static_cast<int>(a.a[0]), type = static_cast<int>(a.a[1]);
  if (domain != AF_UNIX) return -EAFNOSUPPORT;
  int host[2];
  const std::string type_name = socket_type_name(type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (socket_type_from_name(type_name) < 0) return -ESOCKTNOSUPPORT;
  if (socketpair(domain, type | SOCK_CLOEXEC, static_cast<int>(a.a[2]), host) < 0) return -errno;
  return make_pair(p, a.a[3], host, FdKind::kSocket, type & SOCK_CLOEXEC, type_name);
}

int64_t sys_poll(Process& p, const SyscallArgs& a) {
  uint64_t n = a.a[1];
  if (n > FdTable::kMaxFds) return -EINVAL;
  std::vector<pollfd> fds(n), host(n);
  if (n && !p.as->copy_in(fds.data(), a.a[0], n * sizeof(pollfd))) return -EFAULT;
  for (uint64_t i = 0; i < n; ++i) {
    host[i] = fds[i];
    FdEntry* e = fds[i].fd >= 0 ? p.fds.get(fds[i].fd) : nullptr;
    host[i].fd = e ? e->host_fd : -1;
  }
  const int timeout = static_cast<int>(a.a[2]);
  int64_t r =
      wait_for_ready(p, timeout < 0 ? -1 : timeout * 1000000LL, [&](int ms) { return poll(host.data(), n, ms); });
  if (r < 0) return r;
  for (uint64_t i = 0; i < n; ++i) {
    fds[i].revents = host[i].revents;
    if (fds[i].fd >= 0 && !p.fds.get(fds[i].fd)) fds[i].revents = POLLNVAL, ++r;
  }
  return (n && !p.as->copy_out(a.a[0], fds.data(), n * sizeof(pollfd))) ? -EFAULT : r;
}

// select and pselect6, as a poll of the descriptors in their sets;
// pselect6's signal mask is in force while it waits, as rt_sigsuspend's is
// (a signal it lets through ends it with EINTR, the handler's frame saving
// the mask from before the call). Like poll, it gives the vCPU up while
// another guest thread or process could run; it restarts after an epoch
// pause with what is left of its timeout. The timeout is not updated.
int64_t do_select(Process& p, uint64_t nfds, const uint64_t sets_va[3], int64_t timeout_ns,
                  const uint64_t* mask) {
  if (nfds > FdTable::kMaxFds) return -EINVAL;
  const size_t words = (nfds + 63) / 64;
  std::vector<uint64_t> sets[3];
  for (int k = 0; k < 3; ++k) {
    if (!sets_va[k]) continue;
    sets[k].assign(words, 0);
    if (words && !p.as->copy_in(sets[k].data(), sets_va[k], words * 8)) return -EFAULT;
  }
  auto has = [&](int k, uint64_t fd) { return !sets[k].empty() && (sets[k][fd / 64] >> (fd % 64)) & 1; };
  std::vector<pollfd> host;
  std::vector<int> guest_fd;
  for (uint64_t fd = 0; fd < nfds; ++fd) {
    short ev = (has(0, fd) ? POLLIN : 0) | (has(1, fd) ? POLLOUT : 0) | (has(2, fd) ? POLLPRI : 0);
    if (!ev) continue;
    FdEntry* e = p.fds.get(static_cast<int>(fd));
    if (!e) return -EBADF;
    host.push_back({e->host_fd, ev, 0});
    guest_fd.push_back(static_cast<int>(fd));
  }
  const uint64_t before = p.sigmask;
  if (mask)
    if (int64_t r = apply_wait_mask(p, *mask); r < 0) return r;
  const int64_t r = wait_for_ready(p, timeout_ns, [&](int ms) { return poll(host.data(), host.size(), ms); });
  p.sigmask = before;  // before the call again, if it runs again
  if (r < 0) return r;
  for (auto& set : sets) std::fill(set.begin(), set.end(), 0);
  int count = 0;
  for (size_t i = 0; i < host.size(); ++i) {
    const uint64_t fd = static_cast<uint64_t>(guest_fd[i]);
    const short re = host[i].revents;
    auto mark = [&](int k, bool on) {
      if (on && !sets[k].empty() && (host[i].events & (k == 0 ? POLLIN : k == 1 ? POLLOUT : POLLPRI))) {
        sets[k][fd / 64] |= 1ull << (fd % 64);
        ++count;
      }
    };
    mark(0, re & (POLLIN | POLLHUP | POLLERR));
    mark(1, re & (POLLOUT | POLLERR));
    mark(2, re & POLLPRI);
  }
  for (int k = 0; k < 3; ++k)
    if (sets_va[k] && words && !p.as->copy_out(sets_va[k], sets[k].data(), words * 8)) return -EFAULT;
  return count;
}

int64_t sys_select(Process& p, const SyscallArgs& a) {
  const uint64_t sets[3] = {a.a[1], a.a[2], a.a[3]};
  int64_t timeout = -1;
  if (a.a[4]) {
    timeval tv;
    if (!p.as->copy_in(&tv, a.a[4], sizeof tv)) return -EFAULT;
    if (tv.tv_sec < 0 || tv.tv_usec < 0 || tv.tv_usec >= 1000000) return -EINVAL;
    timeout = static_cast<int64_t>(tv.tv_sec) * 1000000000 + tv.tv_usec * 1000;
  }
  return do_select(p, a.a[0], sets, timeout, nullptr);
}

int64_t sys_pselect6(Process& p, const SyscallArgs& a) {
  const uint64_t sets[3] = {a.a[1], a.a[2], a.a[3]};
  int64_t timeout = -1;
  if (a.a[4]) {
    timespec ts;
    if (!p.as->copy_in(&ts, a.a[4], sizeof ts)) return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000) return -EINVAL;
    timeout = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  }
  uint64_t mask = 0;
  bool with_mask = false;
  if (a.a[5]) {
    struct {
      uint64_t set, size;
    } m;
    if (!p.as->copy_in(&m, a.a[5], sizeof m)) return -EFAULT;
    if (m.set) {
      if (m.size != 8) return -EINVAL;
      if (!p.as->copy_in(&mask, m.set, 8)) return -EFAULT;
      with_mask = true;
    }
  }
  return do_select(p, a.a[0], sets, timeout, with_mask ? &mask : nullptr);
}

int64_t sys_sendfile(Process& p, const SyscallArgs& a) {
  int out_fd = fd_arg(a, 0), in_fd = fd_arg(a, 1);
  FdEntry* in = p.fds.get(in_fd);
  if (!in || !p.fds.get(out_fd)) return -EBADF;
  if (must_wait(p, *in)) return kWaitForRelease;
  off_t off = 0;
  bool has_off = a.a[2] != 0;
  if (has_off && !p.as->copy_in(&off, a.a[2], sizeof off)) return -EFAULT;
  std::vector<char> buf(std::min<uint64_t>(a.a[3], 1 << 20));
  ssize_t n = has_off ? pread(in->host_fd, buf.data(), buf.size(), off) : read(in->host_fd, buf.data(), buf.size());
  if (n <= 0) return n < 0 ? -errno : 0;
  int64_t w = write_for_guest(p, out_fd, {{buf.data(), static_cast<size_t>(n)}}, -1);
  if (w < 0) return w;
  if (w < n && !has_off) lseek(in->host_fd, w - n, SEEK_CUR);
  if (has_off) {
    off += w;
    if (!p.as->copy_out(a.a[2], &off, sizeof off)) return -EFAULT;
  }
  return w;
}

// Size, mode and times change only on files the guest opened beneath its
// directory (may_change_metadata). Elsewhere the answer is the one Linux
// gives a program for a file it may not change: ftruncate EINVAL (as for a
// pipe, terminal or device, or a file not open for writing), fchmod and
// futimens EPERM (as for a file it does not own); under a read-only path
// fchmod and futimens EROFS, as on a read-only mount.
int64_t sys_ftruncate(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (!may_change_metadata(*e)) return -EINVAL;
  int host = e->host_fd;
  off_t len = static_cast<off_t>(a.a[1]);
  if (len < 0) return -EINVAL;
  UndoLog* undo = p.out->undo();
  return p.out->change("ftruncate " + e->path, [=] { return ftruncate(host, len) < 0 ? -errno : 0L; },
                       undo ? undo_truncate(*undo, p.root, host, static_cast<uint64_t>(len)) : nullptr);
}

int64_t sys_fsync(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  return fsync(e->host_fd) < 0 && errno != EINVAL ? -errno : 0;
}

int64_t sys_fadvise64(Process& p, const SyscallArgs& a) { return p.fds.get(fd_arg(a, 0)) ? 0 : -EBADF; }

int64_t sys_fchmod(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind == FdKind::kReadOnly) return -EROFS;
  if (!may_change_metadata(*e)) return -EPERM;
  int host = e->host_fd;
  mode_t mode = static_cast<mode_t>(a.a[1]);
  return p.out->change("fchmod " + e->path, [=] { return fchmod(host, mode) < 0 ? -errno : 0L; },
                       undo_attributes(p.root, host, ""));
}

const SyscallDef kDefs[] = {
    {SYS_read, "read", sys_read},
    {SYS_write, "write", sys_write},
    {SYS_pread64, "pread64", sys_pread64},
    {SYS_pwrite64, "pwrite64", sys_pwrite64},
    {SYS_readv, "readv", sys_readv},
    {SYS_writev, "writev", sys_writev},
    {SYS_lseek, "lseek", sys_lseek},
    {SYS_close, "close", sys_close},
    {SYS_fstat, "fstat", sys_fstat},
    {SYS_fstatfs, "fstatfs", sys_fstatfs},
    {SYS_fgetxattr, "fgetxattr", sys_fgetxattr},
    {SYS_flistxattr, "flistxattr", sys_fgetxattr},
    {SYS_getdents64, "getdents64", sys_getdents64},
    {SYS_ioctl, "ioctl", sys_ioctl},
    {SYS_dup, "dup", sys_dup},
    {SYS_dup2, "dup2", sys_dup2},
    {SYS_dup3, "dup3", sys_dup3},
    {SYS_fcntl, "fcntl", sys_fcntl},
    {SYS_pipe, "pipe", sys_pipe},
    {SYS_pipe2, "pipe2", sys_pipe2},
    {SYS_socketpair, "socketpair", sys_socketpair},
    {SYS_poll, "poll", sys_poll},
    {SYS_select, "select", sys_select},
    {SYS_pselect6, "pselect6", sys_pselect6},
    {SYS_sendfile, "sendfile", sys_sendfile},
    {SYS_ftruncate, "ftruncate", sys_ftruncate},
    {SYS_fsync, "fsync", sys_fsync},
    {SYS_fdatasync, "fdatasync", sys_fsync},
    {SYS_fadvise64, "fadvise64", sys_fadvise64},
    {SYS_fchmod, "fchmod", sys_fchmod},
};

}  // namespace

std::span<const SyscallDef> file_syscalls() { return kDefs; }

}  // namespace vmha
