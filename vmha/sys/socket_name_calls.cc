// AF_UNIX names and TCP ports inside the VM: bind, listen, accept and
// connect. A name the guest binds is a socket file in its working directory
// (or an abstract name or a TCP port, kept by vmha alone: a TCP socket is an
// AF_UNIX one on the host), and a connect to it never reaches the host's
// listening socket: vmha pairs the two sides itself (unix_names.h), so every
// connection is a pair of ends with both in the VM, in each checkpoint with
// its bytes in flight, and its queue before accept is vmha's. A name no
// guest socket is bound to leads outside (socket_addr.h: refuse_outside).
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "vmha/output/output_sink.h"
#include "vmha/sys/guest_io.h"
#include "vmha/sys/process_tree.h"
#include "vmha/sys/socket_addr.h"
#include "vmha/sys/syscall_table.h"
#include "vmha/sys/threads.h"

namespace vmha {

namespace {

// Binds the host socket at a path inside the policy, so the file exists as
// natively (ls shows it, a second bind finds it: EADDRINUSE).
int bind_file(Process& p, int host_fd, const SocketName& n) {
  if (n.resolved) return n.resolved;
  if (n.where.read_only) return -EROFS;
  std::string base;
  int parent = p.root.open_parent(n.where.dir, n.where.rel, &base);
  if (parent < 0) return parent;
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  const std::string at = "/proc/self/fd/" + std::to_string(parent) + "/" + base;
  int rc = -ENAMETOOLONG;
  if (at.size() < sizeof sa.sun_path) {
    at.copy(sa.sun_path, at.size());
    rc = ::bind(host_fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0 ? -errno : 0;
  }
  close(parent);
  return rc;
}

int64_t sys_bind(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind != FdKind::kUnixSocket) return is_any_socket(e->kind) ? -EINVAL : -ENOTSOCK;
  if (!socket_bound_name(e->path).empty()) return -EINVAL;  // bound already
  SocketName n;
  if (int rc = read_socket_name(p, a.a[1], a.a[2], socket_family_from_name(e->path), &n)) return rc;
  UnixNames& names = p.fds.unix_names();
  if (n.inet && n.port == 0) {  // a port of vmha's choosing, as the kernel would choose one
    n.port = names.free_port();
    if (!n.port) return -EADDRINUSE;
    n.key = "tcp:" + std::to_string(n.port) + n.key.substr(n.key.find('/'));
  }
  if (n.abstract || n.inet) {
    if (UnixListener* l = names.listener(names.bound(n.key)); l) return -EADDRINUSE;
  } else if (int rc = bind_file(p, e->host_fd, n)) {
    return rc;
  }
  names.bind(n.key, e->channel);
  e->path = socket_prefix(e->path) + ":" + n.key;
  return 0;
}

int64_t sys_listen(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  UnixNames& names = p.fds.unix_names();
  const int backlog = static_cast<int>(std::min<uint64_t>(a.a[1], SOMAXCONN));
  if (e->kind == FdKind::kUnixListener) return names.listen(e->channel, "", "", backlog) < 0 ? -ENOMEM : 0;
  if (e->kind != FdKind::kUnixSocket) return e->kind == FdKind::kSocket ? -EINVAL : -ENOTSOCK;
  std::string name = socket_bound_name(e->path);
  const int type = socket_type_from_name(e->path), family = socket_family_from_name(e->path);
  if (type == SOCK_DGRAM) return -EOPNOTSUPP;
  if (name.empty() && family == AF_UNIX) return -EINVAL;  // Linux would bind an abstract name of its choosing
  if (name.empty()) {                                     // TCP: a port of vmha's choosing on every address
    const int port = names.free_port();
    if (!port) return -EADDRINUSE;
    name = "tcp:" + std::to_string(port) + (family == AF_INET ? "/0.0.0.0" : "/::");
    names.bind(name, e->channel);
    e->path = socket_prefix(e->path) + ":" + name;
  }
  int ready = names.listen(e->channel, name, socket_prefix(e->path), backlog);
  if (ready < 0) return ready;
  int fd = fcntl(ready, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return -errno;
  // A duplicate shares the eventfd's flags: the guest's O_NONBLOCK is kept
  // in the entry (fd_table.h), the host's stays set (the VMM's own reads
  // of the eventfd must not block: a self-connect hung the VM).
  e->open_flags = (e->open_flags & ~kSetflFlags) | (fcntl(e->host_fd, F_GETFL) & O_NONBLOCK);
  close(e->host_fd);  // the socket file stays, as a closed socket's does
  e->host_fd = fd;
  e->kind = FdKind::kUnixListener;
  names.acquire(e->channel);
  return 0;
}

int64_t do_accept(Process& p, const SyscallArgs& a, int flags) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind != FdKind::kUnixListener) return is_guest_socket(e->kind) ? -EINVAL : -ENOTSOCK;
  if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) return -EINVAL;
  UnixNames& names = p.fds.unix_names();
  UnixListener* l = names.listener(e->channel);
  if (!l) return -EINVAL;
  if (l->queue.empty()) {
    if (e->open_flags & O_NONBLOCK) return -EAGAIN;
    // As poll waits: the listener's eventfd is readable once a connection is queued.
    pollfd pfd{e->host_fd, POLLIN, 0};
    if (int64_t r = wait_for_ready(p, -1, [&](int ms) { return poll(&pfd, 1, ms); }); r < 0) return r;
    if (l->queue.empty()) return kRetryLater;
  }
  PendingConnection c = names.accept(*l);
  if (flags & SOCK_NONBLOCK) fcntl(c.host_fd, F_SETFL, O_NONBLOCK);
  FdEntry conn{c.host_fd, FdKind::kSocket, l->prefix + ":" + l->name, 0, (flags & SOCK_CLOEXEC) != 0, -1, c.channel, 1};
  int g = p.fds.install(conn);
  if (g < 0) {
    close(c.host_fd);
    return g;
  }
  sockaddr_storage peer;
  const socklen_t len =
      socket_address("", socket_family_from_name(l->prefix), &peer);  // the connecting side is unnamed
  if (!give_address(p, a.a[1], a.a[2], peer, len)) {
    p.fds.close(g);
    return -EFAULT;
  }
  return g;
}
int64_t sys_accept(Process& p, const SyscallArgs& a) { return do_accept(p, a, 0); }
int64_t sys_accept4(Process& p, const SyscallArgs& a) { return do_accept(p, a, static_cast<int>(a.a[3])); }

// The descriptor of a connecting socket becomes its end of a new pair (end
// 0; the accepting side's is end 1); both record the listener's name, the
// one's peer and the other's own, as Linux names them (fd_table.h).
int64_t connect_to(Process& p, FdEntry& e, UnixListener& l) {
  const int type = socket_type_from_name(e.path);
  if (l.type != type || (socket_family_from_name(e.path) == AF_UNIX) != (socket_family_from_name(l.prefix) == AF_UNIX))
    return -EPROTOTYPE;
  const int nonblock = fcntl(e.host_fd, F_GETFL) & O_NONBLOCK;
  const int channel = p.fds.next_channel();
  int host = -1;
  int rc = p.fds.unix_names().connect(l, channel, &host);
  if (rc == -EAGAIN && !nonblock && p.tree && p.tree->others_runnable(p)) return kRetryLater;  // a full queue
  if (rc < 0) return rc;
  fcntl(host, F_SETFL, nonblock);
  close(e.host_fd);
  e.host_fd = host;
  e.kind = FdKind::kSocket;
  e.path = socket_prefix(e.path) + ":" + l.name;
  e.channel = channel;
  e.end = 0;
  return 0;
}

int64_t sys_connect(Process& p, const SyscallArgs& a) {
  FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (e->kind == FdKind::kSocket) return -EISCONN;
  if (e->kind == FdKind::kUnixListener) return -EINVAL;
  if (e->kind != FdKind::kUnixSocket) return -ENOTSOCK;
  SocketName n;
  if (int rc = read_socket_name(p, a.a[1], a.a[2], socket_family_from_name(e->path), &n)) return rc;
  UnixNames& names = p.fds.unix_names();
  if (const int ch = n.key.empty() ? -1 : names.bound(n.key); ch >= 0) {
    UnixListener* l = names.listener(ch);
    // A TCP port on another address than a local one or the listener's is the network's.
    if (n.inet && !n.local && (!l || l->name != n.key)) return refuse_outside(p, n, "connect");
    return l ? connect_to(p, *e, *l) : -ECONNREFUSED;  // bound, not listening: as natively
  }
  return refuse_outside(p, n, "connect");
}

const SyscallDef kDefs[] = {
    {SYS_bind, "bind", sys_bind},          {SYS_listen, "listen", sys_listen},    {SYS_accept, "accept", sys_accept},
    {SYS_accept4, "accept4", sys_accept4}, {SYS_connect, "connect", sys_connect},
};

}  // namespace

std::span<const SyscallDef> socket_name_syscalls() { return kDefs; }

}  // namespace vmha
