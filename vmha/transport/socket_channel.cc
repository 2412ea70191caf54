#include "vmha/transport/socket_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vmha {
namespace {

using Clock = std::chrono::steady_clock;

int millis_left(Clock::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(d, 0, 1 << 30));
}

// Waits for `events` on fd until the deadline; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, millis_left(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return true;  // let the following call report the error
  }
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

}  // namespace

std::string socket_address_text(const sockaddr_storage& ss) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (ss.ss_family == AF_INET) {
    auto* s = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
    port = ntohs(s->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* s = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
    port = ntohs(s->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

Result<int> tcp_connect(const sockaddr_in& address, const std::string& name, std::chrono::milliseconds timeout) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::error(std::string("socket: ") + std::strerror(errno));
  auto deadline = Clock::now() + timeout;
  int r = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  if (r != 0 && errno != EINPROGRESS) {
    int e = errno;
    ::close(fd);
    return Status::error("cannot connect to " + name + ": " + std::strerror(e));
  }
  if (r != 0) {
    if (!wait_for(fd, POLLOUT, deadline)) {
      ::close(fd);
      return Status::error("timeout: cannot connect to " + name + " within " + std::to_string(timeout.count()) + " ms");
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ::close(fd);
      return Status::error("cannot connect to " + name + ": " + std::strerror(err));
    }
  }
  return fd;
}

SocketChannel::SocketChannel(int fd, std::string peer, std::chrono::milliseconds send_timeout)
    : fd_(fd), peer_(std::move(peer)), send_timeout_(send_timeout) {
  set_nonblocking(fd_);
}

SocketChannel::~SocketChannel() {
  if (fd_ >= 0) ::close(fd_);
}

void SocketChannel::abort() {
  std::lock_guard<std::mutex> lock(fd_mutex_);
  broken_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Result<Frame> SocketChannel::fail(Status s) {
  broken_ = true;
  return s;
}

Status SocketChannel::send_encoded(std::span<const std::uint8_t> bytes) {
  if (!connected()) return Status::error("connection to " + peer_ + " closed");
  auto deadline = Clock::now() + send_timeout_;
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      broken_ = true;
      return Status::error("send to " + peer_ + " failed: " + std::strerror(errno));
    }
    if (!wait_for(fd_, POLLOUT, deadline)) {
      broken_ = true;
      return Status::error("timeout: send to " + peer_ + " did not complete");
    }
  }
  return {};
}

Result<Frame> SocketChannel::receive(std::chrono::milliseconds timeout) {
  if (!connected()) return Status::error("connection to " + peer_ + " closed");
  auto deadline = Clock::now() + timeout;
  std::uint8_t buf[4096];
  for (;;) {
    bool have = false;
    auto f = reader_.next(&have);
    if (!f.ok()) return fail(f.status().context("from " + peer_ + ": "));
    if (have) return f;
    // The reader holds at most one frame and the start of the next: next()
    // hands out or rejects every whole frame before we read again.
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) {
      reader_.append({buf, static_cast<std::size_t>(n)});
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      std::string why = n == 0 ? "closed by the peer" : std::strerror(errno);
      std::string partial = reader_.describe_partial();
      return fail(Status::error("connection to " + peer_ + " lost while receiving (" + why + ")" +
                                (partial.empty() ? "" : ": " + partial)));
    }
    if (!wait_for(fd_, POLLIN, deadline))
      return Status::error("timeout: no message from " + peer_ + " within " + std::to_string(timeout.count()) + " ms");
  }
}

int SocketChannel::release() {
  std::lock_guard<std::mutex> lock(fd_mutex_);
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void SocketChannel::close() {
  if (fd_ < 0) return;
  if (!broken_) {
    ::shutdown(fd_, SHUT_WR);
    auto deadline = Clock::now() + std::chrono::milliseconds(200);
    std::uint8_t buf[512];
    while (wait_for(fd_, POLLIN, deadline)) {
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
  }
  std::lock_guard<std::mutex> lock(fd_mutex_);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace vmha
