// Socket system calls: socket, data, names and options. The guest's sockets
// stay inside the VM: socketpairs (file_calls.cc), and AF_UNIX sockets that
// connect to the guest's own listeners (socket_name_calls.cc) or to nothing.
// A service outside the VM (a name service daemon, a host's syslog) is
// refused: its replies would not be in the checkpoint, so a backup could not
// replay them, and what the guest sends would leave before its epoch is
// acknowledged. Other families (network) are not carried: ENOSYS, reported once.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "vmha/common/iov_io.h"
#include "vmha/output/output_sink.h"
#include "vmha/sys/guest_io.h"
#include "vmha/sys/socket_addr.h"
#include "vmha/sys/syscall_table.h"
#include "vmha/sys/threads.h"

namespace vmha {

namespace {

// log_once keys beside system call numbers (below 512).
constexpr uint64_t kFamilyKey = uint64_t{1} << 40;
constexpr uint64_t kAncillaryKey = uint64_t{1} << 42;
constexpr uint64_t kOptionKey = uint64_t{1} << 43;

std::string family_name(int family) {
  switch (family) {
    case AF_INET:
      return "AF_INET";
    case AF_INET6:
      return "AF_INET6";
    case AF_NETLINK:
      return "AF_NETLINK";
    case AF_PACKET:
      return "AF_PACKET";
    default:
      return "family " + std::to_string(family);
  }
}

// A TCP socket (AF_INET or AF_INET6, SOCK_STREAM) is served as an AF_UNIX
// one: it reaches the guest's own listeners on any local address, and
// nothing else (socket_name_calls.cc).
int64_t sys_socket(Process& p, const SyscallArgs& a) {
  const int family = static_cast<int>(a.a[0]), type = static_cast<int>(a.a[1]);
  const int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), protocol = static_cast<int>(a.a[2]);
  const bool tcp =
      (family == AF_INET || family == AF_INET6) && base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP);
  if (family != AF_UNIX && !tcp) {
    p.log_once(kFamilyKey | static_cast<uint32_t>(family),
               "socket(" + family_name(family) +
                   "): network from the guest is not supported (TCP between the job's own processes is): "
                   "returning ENOSYS to the guest");
    return -ENOSYS;
  }
  FdEntry e;
  e.kind = FdKind::kUnixSocket;
  e.path = tcp ? (family == AF_INET ? "tcp4" : "tcp6") : socket_type_name(base);
  if (socket_type_from_name(e.path) < 0) return -ESOCKTNOSUPPORT;
  e.host_fd = socket(AF_UNIX, base | (type & SOCK_NONBLOCK) | SOCK_CLOEXEC, tcp ? 0 : protocol);
  if (e.host_fd < 0) return -errno;
  e.cloexec = type & SOCK_CLOEXEC;
  e.channel = p.fds.next_channel();  // its name in /proc/self/fd, and how a restore shares it
  int g = p.fds.install(e);
  if (g < 0) close(e.host_fd);
  return g;
}

// A send with a destination: a datagram's is outside the VM; a connected
// stream has one already, an unconnected one cannot take one (as Linux).
// (Datagrams between the guest's own named sockets are not served.)
int64_t send_with_address(Process& p, const FdEntry& e, uint64_t va, uint64_t len, const char* call) {
  if (socket_type_from_name(e.path) != SOCK_DGRAM) return e.kind == FdKind::kSocket ? -EISCONN : -EOPNOTSUPP;
  SocketName n;
  if (int rc = read_socket_name(p, va, len, AF_UNIX, &n)) return rc;
  return refuse_outside(p, n, call);
}

int64_t send_iov(Process& p, const FdEntry& e, const std::vector<iovec>& iov, int flags) {
  if (!(flags & MSG_DONTWAIT) && would_yield(p, e, POLLOUT)) return kRetryLater;
  msghdr m{};
  m.msg_iov = const_cast<iovec*>(iov.data());
  m.msg_iovlen = one_call_pieces(iov.size());  // a short send, as a stream socket may give
  ssize_t n = sendmsg(e.host_fd, &m, flags | MSG_NOSIGNAL);
  if (n < 0) n = -errno;
  if (n == -EPIPE && !(flags & MSG_NOSIGNAL)) p.signals.raise(SIGPIPE, SI_USER);
  // A blocking send cut by an epoch pause sent nothing: it runs again after it.
  if (n == -EINTR) return kWaitForRelease;
  return n;
}

// Receives into iov; *from (capacity *from_len) gets the sender's address.
int64_t recv_iov(Process& p, const FdEntry& e, std::vector<iovec>& iov, int flags, sockaddr_storage* from,
                 socklen_t* from_len, int* msg_flags) {
  if (!(flags & MSG_DONTWAIT) && would_yield(p, e, POLLIN)) return kRetryLater;
  msghdr m{};
  m.msg_name = from;
  m.msg_namelen = sizeof *from;
  m.msg_iov = iov.data();
  m.msg_iovlen = one_call_pieces(iov.size());
  ssize_t n = recvmsg(e.host_fd, &m, flags & ~MSG_CMSG_CLOEXEC);
  if (n < 0) return errno == EINTR ? kWaitForRelease : -errno;
  uint64_t room = 0;
  for (size_t i = 0; i < m.msg_iovlen; ++i) room += iov[i].iov_len;
  p.as->note_written(iov, std::min<uint64_t>(room, static_cast<uint64_t>(n)));  // MSG_TRUNC returns more
  *from_len = m.msg_namelen;
  *msg_flags = m.msg_flags;
  return n;
}

// The guest's socket behind fd, or -errno in *err.
// (A listener carries no data: ENOTCONN, as Linux answers.)
const FdEntry* guest_socket(Process& p, int fd, int64_t* err) {
  const FdEntry* e = p.fds.get(fd);
  *err = !e ? -EBADF : e->kind == FdKind::kUnixListener ? -ENOTCONN : !is_guest_socket(e->kind) ? -ENOTSOCK : 0;
  return *err ? nullptr : e;
}

int64_t sys_sendto(Process& p, const SyscallArgs& a) {
  int64_t err;
  const FdEntry* e = guest_socket(p, fd_arg(a, 0), &err);
  if (!e) return err;
  if (a.a[4]) return send_with_address(p, *e, a.a[4], a.a[5], "sendto");
  std::vector<iovec> iov;
  if (!p.as->gather(a.a[1], a.a[2], false, iov)) return -EFAULT;
  return send_iov(p, *e, iov, static_cast<int>(a.a[3]));
}

int64_t sys_recvfrom(Process& p, const SyscallArgs& a) {
  int64_t err;
  const FdEntry* e = guest_socket(p, fd_arg(a, 0), &err);
  if (!e) return err;
  std::vector<iovec> iov;
  if (!p.as->gather(a.a[1], a.a[2], true, iov)) return -EFAULT;
  sockaddr_storage from{};
  socklen_t got = 0;
  int msg_flags = 0;
  int64_t n = recv_iov(p, *e, iov, static_cast<int>(a.a[3]), &from, &got, &msg_flags);
  if (n >= 0 && !give_address(p, a.a[4], a.a[5], from, got)) return -EFAULT;
  return n;
}

int64_t sys_sendmsg(Process& p, const SyscallArgs& a) {
  int64_t err;
  const FdEntry* e = guest_socket(p, fd_arg(a, 0), &err);
  if (!e) return err;
  msghdr m;
  if (!p.as->copy_in(&m, a.a[1], sizeof m)) return -EFAULT;
  if (m.msg_controllen) {
    p.log_once(kAncillaryKey,
               "sendmsg with ancillary data (descriptors, credentials) is not supported: "
               "returning EOPNOTSUPP to the guest");
    return -EOPNOTSUPP;
  }
  if (m.msg_name && m.msg_namelen)
    return send_with_address(p, *e, reinterpret_cast<uint64_t>(m.msg_name), m.msg_namelen, "sendmsg");
  std::vector<iovec> iov;
  if (!gather_guest_iovec(p, reinterpret_cast<uint64_t>(m.msg_iov), m.msg_iovlen, false, iov)) return -EFAULT;
  return send_iov(p, *e, iov, static_cast<int>(a.a[2]));
}

int64_t sys_recvmsg(Process& p, const SyscallArgs& a) {
  int64_t err;
  const FdEntry* e = guest_socket(p, fd_arg(a, 0), &err);
  if (!e) return err;
  msghdr m;
  if (!p.as->copy_in(&m, a.a[1], sizeof m)) return -EFAULT;
  std::vector<iovec> iov;
  if (!gather_guest_iovec(p, reinterpret_cast<uint64_t>(m.msg_iov), m.msg_iovlen, true, iov)) return -EFAULT;
  sockaddr_storage from{};
  socklen_t got = 0;
  int64_t n = recv_iov(p, *e, iov, static_cast<int>(a.a[2]), &from, &got, &m.msg_flags);
  if (n < 0) return n;
  if (m.msg_name) {
    if (!p.as->copy_out(reinterpret_cast<uint64_t>(m.msg_name), &from, std::min(m.msg_namelen, got))) return -EFAULT;
    m.msg_namelen = got;
  }
  m.msg_controllen = 0;  // nothing ancillary is ever sent inside the VM
  return p.as->copy_out(a.a[1], &m, sizeof m) ? n : -EFAULT;
}

int64_t sys_shutdown(Process& p, const SyscallArgs& a) {
  int64_t err;
  const FdEntry* e = guest_socket(p, fd_arg(a, 0), &err);
  if (!e) return err;  // an inherited socket is shared with the world outside
  return shutdown(e->host_fd, static_cast<int>(a.a[1])) < 0 ? -errno : 0;
}

// getsockname/getpeername: a guest socket's (unnamed) addresses; anything
// else is not a socket (what shells ask of their standard input).
// A bound socket's or listener's own name is the one the guest bound
// (vmha's host socket has none, or another); a connection to a listener
// names it as the connecting side's peer and the accepting side's own; a
// socketpair's ends are unnamed.
int64_t sock_name(Process& p, const SyscallArgs& a, bool peer) {
  const FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (!is_any_socket(e->kind)) return -ENOTSOCK;
  sockaddr_storage addr{};
  socklen_t got = sizeof addr;
  const std::string name = socket_bound_name(e->path);
  const int family = socket_family_from_name(e->path);
  if (e->kind != FdKind::kSocket) {
    if (peer) return -ENOTCONN;
    got = socket_address(name, family, &addr);
  } else if (!name.empty()) {
    got = socket_address((e->end == 0) == peer ? name : "", family, &addr);
  } else if ((peer ? getpeername(e->host_fd, reinterpret_cast<sockaddr*>(&addr), &got)
                   : getsockname(e->host_fd, reinterpret_cast<sockaddr*>(&addr), &got)) < 0) {
    return -errno;
  }
  return give_address(p, a.a[1], a.a[2], addr, got) ? 0 : -EFAULT;
}
int64_t sys_getsockname(Process& p, const SyscallArgs& a) { return sock_name(p, a, false); }
int64_t sys_getpeername(Process& p, const SyscallArgs& a) { return sock_name(p, a, true); }

// The options vmha answers itself: a listener's (its host fd is an
// eventfd) and what makes a TCP socket one (its host socket is AF_UNIX; TCP
// and IP level options read 0). 1 when the host socket answers instead.
int own_option(const FdEntry& e, int level, int name, int* value) {
  const int family = socket_family_from_name(e.path);
  const bool listener = e.kind == FdKind::kUnixListener;
  if (family != AF_UNIX && level != SOL_SOCKET) {
    *value = 0;
    return 0;
  }
  if (level != SOL_SOCKET) return listener ? -ENOPROTOOPT : 1;
  switch (name) {
    case SO_DOMAIN:
      *value = family;
      return 0;
    case SO_PROTOCOL:
      *value = family == AF_UNIX ? 0 : IPPROTO_TCP;
      return 0;
    case SO_TYPE:
      *value = socket_type_from_name(e.path);
      return listener ? 0 : 1;
    case SO_ACCEPTCONN:
      *value = listener;
      return listener ? 0 : 1;
    case SO_ERROR:
      *value = 0;
      return listener ? 0 : 1;
    default:
      return listener ? -ENOPROTOOPT : 1;
  }
}

// Options are read from the host socket (SO_TYPE, SO_ERROR, buffer sizes).
int64_t sys_getsockopt(Process& p, const SyscallArgs& a) {
  const FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (!is_any_socket(e->kind)) return -ENOTSOCK;
  socklen_t room = 0;
  if (!p.as->copy_in(&room, a.a[4], sizeof room)) return -EFAULT;
  std::vector<char> buf(std::min<socklen_t>(room, 256));
  socklen_t got = static_cast<socklen_t>(buf.size());
  int value = 0;
  if (int rc = own_option(*e, static_cast<int>(a.a[1]), static_cast<int>(a.a[2]), &value); rc <= 0) {
    if (rc < 0) return rc;
    got = std::min<socklen_t>(room, sizeof value);
    std::memcpy(buf.data(), &value, got);
  } else if (getsockopt(e->host_fd, static_cast<int>(a.a[1]), static_cast<int>(a.a[2]), buf.data(), &got) < 0) {
    return -errno;
  }
  return p.as->copy_out(a.a[3], buf.data(), got) && p.as->copy_out(a.a[4], &got, sizeof got) ? 0 : -EFAULT;
}

// The options a program sets before bind and listen (Python's listeners
// set SO_REUSEADDR) mean nothing for AF_UNIX and are accepted; buffer sizes
// and keepalive go to the host socket (a restored one has the defaults).
// Anything else (SO_PASSCRED, timeouts) is refused, reported once.
int64_t sys_setsockopt(Process& p, const SyscallArgs& a) {
  const FdEntry* e = p.fds.get(fd_arg(a, 0));
  if (!e) return -EBADF;
  if (!is_any_socket(e->kind)) return -ENOTSOCK;
  const int level = static_cast<int>(a.a[1]), name = static_cast<int>(a.a[2]);
  const bool tcp = socket_family_from_name(e->path) != AF_UNIX;
  if (level == SOL_SOCKET && (name == SO_REUSEADDR || name == SO_REUSEPORT)) return 0;
  // TCP and IP options (TCP_NODELAY, IPV6_V6ONLY, ...) mean nothing between the job's own processes.
  if (tcp && (level == IPPROTO_TCP || level == IPPROTO_IP || level == IPPROTO_IPV6)) return 0;
  if (level == SOL_SOCKET && (name == SO_SNDBUF || name == SO_RCVBUF || name == SO_KEEPALIVE)) {
    if (e->kind == FdKind::kUnixListener || (tcp && name == SO_KEEPALIVE)) return 0;
    int value = 0;
    if (a.a[4] < sizeof value || !p.as->copy_in(&value, a.a[3], sizeof value))
      return a.a[4] < sizeof value ? -EINVAL : -EFAULT;
    return setsockopt(e->host_fd, level, name, &value, sizeof value) < 0 ? -errno : 0;
  }
  p.log_once(kOptionKey | (static_cast<uint64_t>(level & 0xffff) << 16) | (name & 0xffff),
             "setsockopt(level " + std::to_string(level) + ", option " + std::to_string(name) +
                 ") is not supported: returning ENOPROTOOPT to the guest");
  return -ENOPROTOOPT;
}

const SyscallDef kDefs[] = {
    {SYS_socket, "socket", sys_socket},
    {SYS_sendto, "sendto", sys_sendto},
    {SYS_recvfrom, "recvfrom", sys_recvfrom},
    {SYS_sendmsg, "sendmsg", sys_sendmsg},
    {SYS_recvmsg, "recvmsg", sys_recvmsg},
    {SYS_shutdown, "shutdown", sys_shutdown},
    {SYS_getsockname, "getsockname", sys_getsockname},
    {SYS_getpeername, "getpeername", sys_getpeername},
    {SYS_getsockopt, "getsockopt", sys_getsockopt},
    {SYS_setsockopt, "setsockopt", sys_setsockopt},
};

}  // namespace

std::span<const SyscallDef> socket_syscalls() { return kDefs; }

}  // namespace vmha
