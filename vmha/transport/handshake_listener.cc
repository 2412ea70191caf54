#include "vmha/transport/handshake_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
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
  std::string address;  // the peer's, without its port
  std::thread thread;
  std::atomic<bool> done{false};
  Status result;
};

// A connection that has not sent anything yet: an fd, nothing more.
struct Waiting {
  int fd;
  sockaddr_storage peer;
  Clock::time_point until;
};

std::string host_of(const sockaddr_storage& peer) {
  const std::string text = socket_address_text(peer);
  const size_t colon = text.rfind(':');
  return colon == std::string::npos ? text : text.substr(0, colon);
}

void run_handshake(Handshake* h, const Authenticator& auth, std::chrono::milliseconds timeout, int wake_fd) {
  h->result = authenticate_as_backup(*h->channel, auth, timeout);
  if (!h->result.ok()) h->channel->close();
  h->done = true;
  std::uint64_t one = 1;
  (void)!::write(wake_fd, &one, sizeof one);
}

// The handshakes in progress for one accept(): the first that succeeds wins;
// the refusals are kept to report if none does.
class HandshakeSet {
 public:
  bool any_done() const {
    return std::any_of(running_.begin(), running_.end(), [](const auto& h) { return h->done.load(); });
  }
  bool empty() const { return running_.empty(); }
  size_t size() const { return running_.size(); }
  size_t from(const std::string& address) const {
    return static_cast<size_t>(
        std::count_if(running_.begin(), running_.end(), [&](const auto& h) { return h->address == address; }));
  }
  bool refused_any() const { return !refused_.empty(); }

  // Joins the finished handshakes: the first success becomes the winner.
  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      Handshake& h = **it;
      if (!h.done) {
        ++it;
        continue;
      }
      h.thread.join();
      if (h.result.ok() && !winner_)
        winner_ = std::move(h.channel);
      else if (!h.result.ok())
        refused_.push_back(h.result.message());
      it = running_.erase(it);
    }
  }
  std::unique_ptr<SocketChannel> take_winner() { return std::move(winner_); }
  bool has_winner() const { return winner_ != nullptr; }

  void cancel_all() {
    for (auto& h : running_) h->channel->abort();
    for (auto& h : running_) h->thread.join();
    running_.clear();
  }

  Status first_refusal() const {
    std::string m = refused_.front();
    if (refused_.size() > 1) m += " (and " + std::to_string(refused_.size() - 1) + " more peers refused)";
    return Status::error(m);
  }

  // Runs the handshake with the peer on `c` on its own thread; without a
  // thread to spare the peer is dropped (closing its socket).
  void start(int c, const sockaddr_storage& peer, const Authenticator& auth,
             std::chrono::milliseconds handshake_timeout, std::chrono::milliseconds send_timeout, int wake_fd) {
    auto h = std::make_unique<Handshake>();
    h->channel = std::make_unique<SocketChannel>(c, socket_address_text(peer), send_timeout);
    h->address = host_of(peer);
    try {
      h->thread = std::thread(run_handshake, h.get(), std::cref(auth), handshake_timeout, wake_fd);
    } catch (const std::system_error&) {
      return;  // keep serving
    }
    running_.push_back(std::move(h));
  }

 private:
  std::vector<std::unique_ptr<Handshake>> running_;
  std::vector<std::string> refused_;
  std::unique_ptr<SocketChannel> winner_;
};

}  // namespace

Result<std::unique_ptr<HandshakeListener>> HandshakeListener::open(const sockaddr_in& address,
                                                                   const std::string& name) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::error("cannot listen on " + name + ": socket: " + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, SOMAXCONN) != 0) {
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

Result<std::unique_ptr<SocketChannel>> HandshakeListener::accept(const Authenticator& auth,
                                                                 std::chrono::milliseconds handshake_timeout,
                                                                 std::chrono::milliseconds timeout,
                                                                 std::chrono::milliseconds send_timeout) {
  const auto deadline = Clock::now() + timeout;
  const auto per_peer = std::min(handshake_timeout, kMaxHandshake);
  HandshakeSet handshakes;
  std::deque<Waiting> waiting;  // oldest first
  auto drop = [](const Waiting& w) { ::close(w.fd); };
  struct Cleanup {
    HandshakeSet& h;
    std::deque<Waiting>& w;
    ~Cleanup() {
      h.cancel_all();
      for (const Waiting& x : w) ::close(x.fd);
    }
  } cleanup{handshakes, waiting};
  for (;;) {
    handshakes.reap();
    if (handshakes.has_winner()) return handshakes.take_winner();  // the others lose: one primary per backup
    if (handshakes.refused_any() && handshakes.empty()) return handshakes.first_refusal();
    auto now = Clock::now();
    if (now >= deadline) {
      if (handshakes.refused_any()) return handshakes.first_refusal();
      return Status::error("timeout: no primary connected to " + address_ + " within " +
                           std::to_string(timeout.count()) + " ms");
    }
    // Silent too long: dropped (a real primary speaks at once).
    while (!waiting.empty() && waiting.front().until <= now) {
      drop(waiting.front());
      waiting.pop_front();
    }
    std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}, {fd_, POLLIN, 0}};
    for (const Waiting& w : waiting) fds.push_back({w.fd, POLLIN, 0});
    auto until = waiting.empty() ? deadline : std::min(deadline, waiting.front().until);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    int r = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(ms, 1 << 30)));
    if (r < 0 && errno != EINTR) return Status::error("accept on " + address_ + ": poll: " + std::strerror(errno));
    if (fds[0].revents & POLLIN) {
      std::uint64_t n;
      (void)!::read(wake_fd_, &n, sizeof n);
    }
    // Those that spoke (or hung up: the handshake reports it) get a
    // handshake while there is room, theirs and their address's.
    std::deque<Waiting> still;
    for (size_t i = 0; i < waiting.size(); ++i) {
      const Waiting& w = waiting[i];
      const bool spoke = fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR);
      if (spoke && handshakes.size() < kMaxConcurrentHandshakes &&
          handshakes.from(host_of(w.peer)) < kMaxHandshakesPerAddress)
        handshakes.start(w.fd, w.peer, auth, per_peer, send_timeout, wake_fd_);
      else
        still.push_back(w);
    }
    waiting.swap(still);
    if (!(fds[1].revents & POLLIN)) continue;
    // Every connection the kernel holds, at once: none waits in its backlog.
    for (;;) {
      sockaddr_storage peer{};
      socklen_t len = sizeof peer;
      int c = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (c < 0 && (errno == EMFILE || errno == ENFILE) && !waiting.empty()) {
        drop(waiting.front());  // out of descriptors: the oldest silent one makes room
        waiting.pop_front();
        continue;
      }
      if (c < 0) break;  // EAGAIN: none left (or the peer left already)
      if (waiting.size() >= kMaxWaiting) {
        drop(waiting.front());
        waiting.pop_front();
      }
      waiting.push_back({c, peer, Clock::now() + kFirstBytesWithin});
    }
  }
}

}  // namespace vmha
