#include "vmha/transport/handshake_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "vmha/transport/handshake.h"

namespace vmha {
namespace {

using Clock = std::chrono::steady_clock;

struct Handshake {
  std::unique_ptr<SocketChannel> channel;
  std::thread thread;
  std::atomic<bool> done{false};
  Status result;
};

void run_handshake(Handshake* h, const Authenticator& auth, std::chrono::milliseconds timeout,
                   int wake_fd) {
  h->result = authenticate_as_backup(*h->channel, auth, timeout);
  if (!h->result.ok()) h->channel->close();
  h->done = true;
  std::uint64_t one = 1;
  (void)!::write(wake_fd, &one, sizeof one);
}

}  // namespace

Result<std::unique_ptr<HandshakeListener>> HandshakeListener::open(const sockaddr_in& address,
                                                                   const std::string& name) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::error("cannot listen on " + name + ": socket: " + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 64) != 0) {
    int e = errno;
    ::close(fd);
    return Status::error("cannot listen on " + name + ": " + std::strerror(e));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  std::string text = name;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) text = socket_address_text(bound);
  int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake < 0) {
    int e = errno;
    ::close(fd);
    return Status::error(std::string("eventfd: ") + std::strerror(e));
  }
  return std::unique_ptr<HandshakeListener>(new HandshakeListener(fd, wake, text));
}

HandshakeListener::~HandshakeListener() {
  ::close(fd_);
  ::close(wake_fd_);
}

Result<std::unique_ptr<SocketChannel>> HandshakeListener::accept(
    const Authenticator& auth, std::chrono::milliseconds handshake_timeout,
    std::chrono::milliseconds timeout, std::chrono::milliseconds send_timeout) {
  auto deadline = Clock::now() + timeout;
  std::vector<std::unique_ptr<Handshake>> running;
  std::vector<std::string> refused;
  std::unique_ptr<SocketChannel> winner;

  auto reap = [&] {
    for (auto it = running.begin(); it != running.end();) {
      Handshake& h = **it;
      if (!h.done) {
        ++it;
        continue;
      }
      h.thread.join();
      if (h.result.ok() && !winner) winner = std::move(h.channel);
      else if (!h.result.ok()) refused.push_back(h.result.message());
      it = running.erase(it);
    }
  };
  auto cancel_all = [&] {
    for (auto& h : running) h->channel->abort();
    for (auto& h : running) h->thread.join();
    running.clear();
  };
  auto first_refusal = [&] {
    std::string m = refused.front();
    if (refused.size() > 1) m += " (and " + std::to_string(refused.size() - 1) + " more peers refused)";
    return Status::error(m);
  };

  bool out_of_fds = false;
  for (;;) {
    if (std::any_of(running.begin(), running.end(), [](const auto& h) { return h->done.load(); }))
      out_of_fds = false;
    reap();
    if (winner) {
      cancel_all();  // others lose: one primary per backup
      return winner;
    }
    if (!refused.empty() && running.empty()) return first_refusal();
    auto now = Clock::now();
    if (now >= deadline) {
      cancel_all();
      if (!refused.empty()) return first_refusal();
      return Status::error("timeout: no primary connected to " + address_ + " within " +
                           std::to_string(timeout.count()) + " ms");
    }
    // While all slots are busy (or descriptors ran out), new connections
    // wait in the kernel's backlog.
    bool room = running.size() < kMaxConcurrentHandshakes && !out_of_fds;
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd_, POLLIN, 0}};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    int r = ::poll(fds, room ? 2 : 1, static_cast<int>(std::min<long long>(ms, 1 << 30)));
    if (r < 0 && errno != EINTR) {
      cancel_all();
      return Status::error("accept on " + address_ + ": poll: " + std::strerror(errno));
    }
    if (fds[0].revents & POLLIN) {
      std::uint64_t n;
      (void)!::read(wake_fd_, &n, sizeof n);
    }
    if (!room || !(fds[1].revents & POLLIN)) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int c = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0 && (errno == EMFILE || errno == ENFILE)) {
      // Retry once a handshake has ended and freed one; with none running
      // nothing would free one.
      if (running.empty()) return Status::error("accept on " + address_ + ": " + std::strerror(errno));
      out_of_fds = true;
      continue;
    }
    if (c < 0) continue;  // the peer left already
    auto h = std::make_unique<Handshake>();
    h->channel = std::make_unique<SocketChannel>(c, socket_address_text(peer), send_timeout);
    try {
      h->thread = std::thread(run_handshake, h.get(), std::cref(auth), handshake_timeout, wake_fd_);
    } catch (const std::system_error&) {
      continue;  // no thread to spare: drop this peer (closing its socket), keep serving
    }
    running.push_back(std::move(h));
  }
}

}  // namespace vmha
