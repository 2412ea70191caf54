// The fd table section of the VM state: each open guest descriptor with its
// kind, path, flags, offset and the bytes in flight in its pipe or socket,
// then the channel count. Restore reopens files by path and recreates pipes
// and socketpairs per channel, refilled with the bytes that were in flight
// (a datagram or seqpacket pair's as its messages, each with its length);
// an unconnected AF_UNIX socket is made again of its type.
// A file's record carries its inode number after the path and a NUL (a
// reader from before ends the path there): a file the guest removed after
// the checkpoint is found where the primary held it (sys/removed_files.h).
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "vmha/state/vm_state_codec.h"
#include "vmha/sys/removed_files.h"

namespace vmha {

namespace {

// The whole /proc/self/fd listing behind a descriptor (sys/proc_views.h).
bool read_listing(int host_fd, std::string* out) {
  struct stat st;
  if (fstat(host_fd, &st) != 0) return false;
  out->assign(static_cast<size_t>(st.st_size), '\0');
  return pread(host_fd, out->data(), out->size(), 0) == st.st_size;
}

// One descriptor as saved: the entry plus what lives only in its host fd.
struct SavedFd {
  int fd = -1;
  FdEntry e;
  uint64_t offset = 0;
  std::string pending;  // bytes in flight (pipe read end, socket)
  uint64_t ino = 0;     // kFile: the file's inode (0: not recorded)
};

// A file of the working directory, as the checkpoint had it open: at its
// path, unless another file (or none) is there now and the primary held the
// one it had (removed after the checkpoint). A host fd or -errno.
int reopen_file(Process& p, SavedFd& s) {
  FdEntry& e = s.e;
  int flags = e.open_flags & ~(O_CREAT | O_TRUNC | O_EXCL);
  int fd = p.root.open_beneath(p.root.root_fd(), e.path, flags, 0);
  struct stat st;
  if (s.ino == 0 || (fd >= 0 && fstat(fd, &st) == 0 && st.st_ino == s.ino)) return fd;
  int held = p.root.open_beneath(p.root.root_fd(), held_path(p.root.run_id(), static_cast<ino_t>(s.ino)), flags, 0);
  if (held < 0) return fd;
  if (fd >= 0) {
    close(fd);
    e.path = held_path(p.root.run_id(), static_cast<ino_t>(s.ino));
    return held;
  }
  // The name is free: give it back, as the checkpoint's file system had it
  // (the guest may remove it again).
  std::string base;
  int parent = p.root.open_parent(p.root.root_fd(), e.path, &base);
  bool named = parent >= 0 && linkat(p.root.root_fd(), held_path(p.root.run_id(), static_cast<ino_t>(s.ino)).c_str(), parent,
                                     base.c_str(), 0) == 0;
  if (parent >= 0) close(parent);
  if (!named) e.path = held_path(p.root.run_id(), static_cast<ino_t>(s.ino));
  return held;
}

// The listing as the guest had it, at the same position: a host fd or -errno.
int reopen_listing(const SavedFd& s) {
  int fd = memfd_create("vmha-proc-fd", MFD_CLOEXEC);
  if (fd < 0) return -errno;
  if (write(fd, s.pending.data(), s.pending.size()) != static_cast<ssize_t>(s.pending.size()) ||
      lseek(fd, static_cast<off_t>(std::min<uint64_t>(s.offset, s.pending.size())), SEEK_SET) < 0) {
    int err = errno ? errno : EIO;
    close(fd);
    return -err;
  }
  return fd;
}

Status encode_fd(ByteWriter& w, int fd, const FdEntry& e, FdTable& table) {
  w.u32(static_cast<uint32_t>(fd));
  w.u32(static_cast<uint32_t>(e.kind));
  struct stat st;
  if (e.kind == FdKind::kFile && fstat(e.host_fd, &st) == 0)
    w.str(e.path + '\0' + std::to_string(st.st_ino));
  else
    w.str(e.path);
  int flags = e.open_flags;
  if (e.kind == FdKind::kPipe || is_guest_socket(e.kind)) flags = fcntl(e.host_fd, F_GETFL);
  w.u32(static_cast<uint32_t>(flags));
  w.u32(e.cloexec);
  const UnixListener* l = e.kind == FdKind::kUnixListener ? table.unix_names().listener(e.channel) : nullptr;
  w.u32(static_cast<uint32_t>(l ? l->backlog : e.stream));  // a listener's backlog
  w.u32(static_cast<uint32_t>(e.channel));
  w.u32(static_cast<uint32_t>(e.end));
  off_t off = lseek(e.host_fd, 0, SEEK_CUR);
  w.u64(off < 0 ? 0 : static_cast<uint64_t>(off));
  std::string pending;
  if (e.kind == FdKind::kSocket || (e.kind == FdKind::kPipe && e.end == 0))
    if (Status s = peek_pending(e, &pending); !s.ok()) return s;
  if (e.kind == FdKind::kProcFds && !read_listing(e.host_fd, &pending))
    return Status::error(errno_text("reading a guest's /proc/self/fd listing"));
  if (l)
    if (Status s = encode_listener_queue(*l, &pending); !s.ok()) return s;
  if (e.kind == FdKind::kEpoll) encode_epoll_interest(table.epolls().interest(e.channel, &table), &pending);
  w.str(pending);
  return Status();
}

// False (and the reader failed) when the record is cut short or names a
// descriptor or pipe end out of range.
bool decode_fd(ByteReader& r, SavedFd* s) {
  s->fd = static_cast<int>(r.u32("fd"));
  FdEntry& e = s->e;
  e.kind = static_cast<FdKind>(r.u32("fd kind"));
  e.path = r.str("fd path");
  if (size_t nul = e.path.find('\0'); nul != std::string::npos) {
    s->ino = std::strtoull(e.path.c_str() + nul + 1, nullptr, 10);
    e.path.resize(nul);
  }
  e.open_flags = static_cast<int>(r.u32("fd flags"));
  e.cloexec = r.u32("fd cloexec");
  e.stream = static_cast<int>(r.u32("fd stream"));
  e.channel = static_cast<int>(r.u32("fd channel"));
  e.end = static_cast<int>(r.u32("fd end"));
  s->offset = r.u64("fd offset");
  s->pending = r.str("fd pending data");
  if (!r.ok()) return false;
  if (s->fd < 0 || s->fd >= FdTable::kMaxFds || e.end < 0 || e.end > 1) {
    r.fail("fd", "a descriptor below 1024");
    return false;
  }
  return true;
}

// Opens the host side of a saved descriptor into s.e.host_fd. Returns why a
// host operation failed ("" when none did); a bad value fails the reader.
std::string reopen_fd(ByteReader& r, const VmOptions& opts, Process& p, ChannelPairs& channels, SavedFd& s) {
  FdEntry& e = s.e;
  std::string problem;
  // One open file description that dup or fork shared: opened once, then
  // dup'ed, so its offset stays shared (a shell's `{ a; b; } > out`).
  const bool shared = reopened_alone(e.kind) && e.channel >= 0;
  if (shared)
    if (auto it = channels.descriptions.find(e.channel); it != channels.descriptions.end()) {
      e.host_fd = fcntl(it->second, F_DUPFD_CLOEXEC, 0);
      return e.host_fd < 0 ? errno_text("duplicating a restored descriptor") : "";
    }
  switch (e.kind) {
    case FdKind::kStdStream:
      if (e.stream < 0 || e.stream > 2) {
        r.fail("fd stream", "0, 1 or 2");
        break;
      }
      e.host_fd = fcntl(opts.std_fds[e.stream], F_DUPFD_CLOEXEC, 0);
      break;
    case FdKind::kFile:
      e.host_fd = reopen_file(p, s);
      if (e.host_fd < 0)
        problem = "cannot reopen guest fd " + std::to_string(s.fd) + " (" + e.path + "): " + std::strerror(-e.host_fd);
      else
        lseek(e.host_fd, static_cast<off_t>(s.offset), SEEK_SET);
      break;
    case FdKind::kReadOnly: {
      // Through this VMM's policy: a path it does not hold read-only is refused.
      Located l;
      int rc = p.root.locate(e.path, &l);
      if (rc == 0 && !l.read_only) rc = -EACCES;
      e.host_fd = rc < 0 ? rc : p.root.open_read_only(l.dir, l.rel, e.open_flags);
      if (e.host_fd < 0)
        problem = "cannot reopen guest fd " + std::to_string(s.fd) + " (" + e.path +
                  ", read-only): " + std::strerror(-e.host_fd) +
                  (rc == -EACCES ? " (not a read-only path of this vmha)" : "");
      else if (!(e.open_flags & O_PATH))
        lseek(e.host_fd, static_cast<off_t>(s.offset), SEEK_SET);
      break;
    }
    case FdKind::kDevice:
      // Only the devices the policy allows by name: a state cannot open another host file.
      if (!Confinement::is_allowed_device(e.path)) {
        r.fail("device path", "/dev/null, /dev/zero, /dev/urandom or /dev/random");
        break;
      }
      e.host_fd = open(e.path.c_str(), (e.open_flags & O_ACCMODE) | O_CLOEXEC);
      break;
    case FdKind::kProcFds:
      e.host_fd = reopen_listing(s);
      if (e.host_fd < 0)
        problem = "cannot recreate a guest's /proc/self/fd listing: " + std::string(std::strerror(-e.host_fd));
      break;
    case FdKind::kUnixSocket: {
      const int type = socket_type_from_name(e.path);
      if (type < 0) {
        r.fail("socket type", "\"\", \"dgram\" or \"seqpacket\"");
        break;
      }
      e.host_fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
      if (e.host_fd < 0) {
        problem = errno_text("recreating a guest socket");
        break;
      }
      fcntl(e.host_fd, F_SETFL, e.open_flags);
      // Its name leads to it again (the socket file is the guest's, left as it was).
      if (std::string name = socket_bound_name(e.path); !name.empty()) p.fds.unix_names().bind(name, e.channel);
      break;
    }
    case FdKind::kUnixListener:
      e.host_fd = reopen_listener(r, p, channels, e, s.pending, &problem);
      break;
    case FdKind::kEpoll:
      e.host_fd = epoll_create1(EPOLL_CLOEXEC);
      if (e.host_fd < 0) problem = errno_text("recreating a guest's epoll instance");
      break;
    case FdKind::kPipe:
    case FdKind::kSocket:
      e.host_fd = reopen_pair_end(r, channels, e, s.pending, &problem);
      if (e.host_fd >= 0) fcntl(e.host_fd, F_SETFL, e.open_flags);
      break;
    default:
      r.fail("fd kind", "0..9");
  }
  if (shared && problem.empty() && e.host_fd >= 0)
    channels.descriptions[e.channel] = fcntl(e.host_fd, F_DUPFD_CLOEXEC, 0);
  return problem;
}

}  // namespace

Status VmStateCodec::encode_fds(ByteWriter& w, const Vm& vm) {
  const auto& fds = vm.proc_->fds.entries();
  uint32_t nfds = 0;
  for (const FdEntry& e : fds) nfds += e.host_fd >= 0;
  w.u32(nfds);
  for (size_t fd = 0; fd < fds.size(); ++fd)
    if (fds[fd].host_fd >= 0)
      if (Status s = encode_fd(w, static_cast<int>(fd), fds[fd], vm.proc_->fds); !s.ok()) return s;
  w.u32(static_cast<uint32_t>(vm.proc_->fds.channels()));
  return Status();
}

ChannelPairs::~ChannelPairs() {
  // The tables hold their own duplicates of every pipe end and description.
  for (auto& [ch, pr] : pairs) {
    if (pr.host[0] >= 0) close(pr.host[0]);
    if (pr.host[1] >= 0) close(pr.host[1]);
  }
  for (auto& [ch, fd] : descriptions)
    if (fd >= 0) close(fd);
}

Status VmStateCodec::decode_fds(ByteReader& r, const VmOptions& opts, Vm& vm, ChannelPairs* channels) {
  Process& p = *vm.proc_;
  uint32_t nfds = r.u32("fd count");
  if (nfds > FdTable::kMaxFds) r.fail("fd count", "at most 1024");
  ChannelPairs own;
  ChannelPairs& shared = channels ? *channels : own;
  std::string problem;
  std::map<int, std::string> epolls;  // guest epoll fd -> what it watched
  for (uint32_t i = 0; i < nfds && r.ok(); ++i) {
    SavedFd s;
    if (!decode_fd(r, &s)) break;
    problem = reopen_fd(r, opts, p, shared, s);
    if (!problem.empty()) break;
    if (s.e.host_fd >= 0) p.fds.install_at(s.fd, s.e);
    if (s.e.kind == FdKind::kEpoll) epolls[s.fd] = s.pending;
  }
  for (const auto& [epfd, saved] : epolls)
    if (problem.empty() && r.ok()) problem = rewatch_epoll(r, p, epfd, saved);
  if (!problem.empty()) return Status::error("restore: " + problem);
  p.fds.set_next_channel(static_cast<int>(r.u32("channel count")));
  return Status();
}

}  // namespace vmha
