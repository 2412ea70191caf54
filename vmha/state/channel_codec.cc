// What waits in the guest's channels, for the fd table section (fd_codec.cc):
// the bytes in flight in pipes and socketpairs, peeked without consuming
// them and refilled into the restored pair, and the connections a listener
// holds before accept (sys/unix_names.h), each a socketpair end of its own
// channel.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

// The datagrams (or records) waiting in a socketpair end of another type
// than stream, each as a 4-byte length and its bytes: peeked one after the
// other at a moving peek offset (SO_PEEK_OFF), consuming none.
Status peek_messages(int fd, std::string* out) {
  out->clear();
  int zero = 0, off = -1;
  if (setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &zero, sizeof zero) < 0) return Status::error(errno_text("SO_PEEK_OFF"));
  int rcvbuf = 0;
  socklen_t len = sizeof rcvbuf;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len);
  std::string msg(static_cast<size_t>(std::max(rcvbuf, 1 << 16)), '\0');
  Status s;
  for (;;) {
    ssize_t n = recv(fd, msg.data(), msg.size(), MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN) s = Status::error(errno_text("recv(MSG_PEEK) of a guest socket"));
      break;
    }
    uint32_t n32 = static_cast<uint32_t>(n);
    out->append(reinterpret_cast<const char*>(&n32), sizeof n32);
    out->append(msg.data(), static_cast<size_t>(n));
  }
  setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof off);
  return s;
}

// Sends the messages peek_messages saved, one datagram each; false when
// they are cut short or a send fails.
bool refill_messages(int fd, const std::string& saved) {
  for (size_t at = 0; at < saved.size();) {
    uint32_t n = 0;
    if (saved.size() - at < sizeof n) return false;
    std::memcpy(&n, saved.data() + at, sizeof n);
    at += sizeof n;
    if (saved.size() - at < n || send(fd, saved.data() + at, n, MSG_DONTWAIT | MSG_NOSIGNAL) != static_cast<ssize_t>(n))
      return false;
    at += n;
  }
  return true;
}

}  // namespace

// Bytes waiting in a pipe or socket, read without consuming them.
Status peek_pending(const FdEntry& e, std::string* out) {
  if (e.kind == FdKind::kSocket && socket_type_from_name(e.path) != SOCK_STREAM) return peek_messages(e.host_fd, out);
  int n = 0;
  if (ioctl(e.host_fd, FIONREAD, &n) < 0) return Status::error(errno_text("FIONREAD"));
  out->assign(static_cast<size_t>(n), '\0');
  if (n == 0) return Status();
  if (e.kind == FdKind::kSocket) {
    ssize_t got = recv(e.host_fd, out->data(), n, MSG_PEEK | MSG_DONTWAIT);
    if (got != n) return Status::error(errno_text("recv(MSG_PEEK) of a guest socket"));
    return Status();
  }
  int tmp[2];
  if (pipe2(tmp, O_CLOEXEC) < 0) return Status::error(errno_text("pipe2"));
  // As many buffers as the guest's pipe has: tee copies whole buffers, and
  // the bytes may lie in several (a partly read page, then newer ones).
  const int slots = fcntl(e.host_fd, F_GETPIPE_SZ);
  fcntl(tmp[1], F_SETPIPE_SZ, std::max(n, slots));
  ssize_t got = tee(e.host_fd, tmp[1], n, SPLICE_F_NONBLOCK);
  ssize_t r = got == n ? read(tmp[0], out->data(), n) : -1;
  close(tmp[0]);
  close(tmp[1]);
  if (r != n) return Status::error("cannot copy the data waiting in a guest pipe");
  return Status();
}

namespace {

void put_u32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), sizeof v); }

bool get_u32(const std::string& in, size_t* at, uint32_t* v) {
  if (in.size() - *at < sizeof *v) return false;
  std::memcpy(v, in.data() + *at, sizeof *v);
  *at += sizeof *v;
  return true;
}

}  // namespace

Status encode_listener_queue(const UnixListener& l, std::string* out) {
  out->clear();
  for (const PendingConnection& c : l.queue) {
    FdEntry end{c.host_fd, FdKind::kSocket, l.prefix, 0, false, -1, c.channel, 1};
    std::string pending;
    if (Status s = peek_pending(end, &pending); !s.ok()) return s;
    put_u32(out, static_cast<uint32_t>(c.channel));
    put_u32(out, static_cast<uint32_t>(pending.size()));
    out->append(pending);
  }
  return Status();
}

int reopen_pair_end(ByteReader& r, ChannelPairs& channels, const FdEntry& e, const std::string& pending,
                    std::string* problem) {
  const int type = e.kind == FdKind::kSocket ? socket_type_from_name(e.path) : 0;
  if (type < 0) {
    r.fail("socket type", "\"\", \"dgram\" or \"seqpacket\"");
    return -1;
  }
  ChannelPair& pr = channels.pairs[e.channel];
  if (pr.host[0] < 0) {
    int rc = e.kind == FdKind::kPipe ? pipe2(pr.host, O_CLOEXEC) : socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, pr.host);
    if (rc < 0) {
      *problem = errno_text("recreating a guest pipe");
      return -1;
    }
    pr.kind = e.kind;
  }
  if (!pr.filled[e.end] && !pending.empty()) {
    int into = e.kind == FdKind::kPipe ? pr.host[1] : pr.host[1 - e.end];
    if (type != SOCK_STREAM && e.kind == FdKind::kSocket) {
      if (!refill_messages(into, pending)) {
        r.fail("fd pending data", "the messages of a guest socket");
        return -1;
      }
    } else if (write(into, pending.data(), pending.size()) != static_cast<ssize_t>(pending.size())) {
      *problem = "cannot refill a guest pipe";
      return -1;
    }
  }
  pr.filled[e.end] = true;
  int fd = fcntl(pr.host[e.end], F_DUPFD_CLOEXEC, 0);
  if (fd < 0) *problem = errno_text("duplicating a restored pipe");
  return fd;
}

int reopen_listener(ByteReader& r, Process& p, ChannelPairs& channels, const FdEntry& e, const std::string& queue,
                    std::string* problem) {
  UnixNames& names = p.fds.unix_names();
  UnixListener* l = names.listener(e.channel);
  if (!l) {
    const int type = socket_type_from_name(e.path);
    const std::string name = socket_bound_name(e.path);
    if ((type != SOCK_STREAM && type != SOCK_SEQPACKET) || name.empty()) {
      r.fail("listener", "a stream or seqpacket socket's type and name");
      return -1;
    }
    if (int rc = names.listen(e.channel, name, socket_prefix(e.path), e.stream); rc < 0) {
      *problem = "cannot recreate a guest's listener: " + std::string(std::strerror(-rc));
      return -1;
    }
    names.bind(name, e.channel);
    l = names.listener(e.channel);
    for (size_t at = 0; at < queue.size();) {
      uint32_t channel = 0, len = 0;
      if (!get_u32(queue, &at, &channel) || !get_u32(queue, &at, &len) || queue.size() - at < len ||
          static_cast<int>(channel) < 0) {
        r.fail("listener queue", "each connection's channel and bytes");
        return -1;
      }
      FdEntry end{-1, FdKind::kSocket, socket_prefix(e.path), 0, false, -1, static_cast<int>(channel), 1};
      int fd = reopen_pair_end(r, channels, end, queue.substr(at, len), problem);
      if (fd < 0) return -1;
      names.requeue(*l, {fd, end.channel});
      at += len;
    }
  }
  int fd = fcntl(l->ready_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    *problem = errno_text("duplicating a restored listener");
    return -1;
  }
  return fd;  // the guest's O_NONBLOCK is e.open_flags (fd_table.h); the host's stays set
}

}  // namespace vmha
