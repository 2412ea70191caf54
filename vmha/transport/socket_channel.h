// Internal to the transport: vmha frames over a plain TCP socket. This is the
// only thing a peer reaches before authentication: the handshake and the UCX
// worker-address exchange run on it, then it is closed and UCX carries the
// connection (see ucx_transport.h). Everything it parses is vmha's own code,
// bounded by the frame limits and by timeouts.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "vmha/transport/frame_reader.h"
#include "vmha/transport/transport.h"

namespace vmha {

class SocketChannel final : public Channel {
 public:
  // Takes ownership of a connected socket (made non-blocking here).
  SocketChannel(int fd, std::string peer, std::chrono::milliseconds send_timeout);
  ~SocketChannel() override;
  SocketChannel(const SocketChannel&) = delete;
  SocketChannel& operator=(const SocketChannel&) = delete;

  void set_max_payload(std::uint32_t n) { reader_.set_max_payload(n); }
  // From another thread: makes pending and later operations fail at once
  // (safe against a concurrent close()).
  void abort();

  Status send_encoded(std::span<const std::uint8_t> bytes) override;
  Result<Frame> receive(std::chrono::milliseconds timeout) override;
  Status pull(std::span<const PullOp>) override {
    return Status::error("pull: not possible on the handshake socket to " + peer_);
  }
  const std::vector<RegionInfo>& remote_regions() const override { return no_regions_; }
  bool connected() const override { return fd_ >= 0 && !broken_; }
  std::string peer() const override { return peer_; }
  // Hands the socket over (see UcxChannel::watch_peer_socket); -1 if closed.
  int release();
  // Half-closes, reads what the peer still sends for up to ~200 ms (so our
  // last frame is not lost to a reset), then closes.
  void close() override;

 private:
  Result<Frame> fail(Status s);

  int fd_;
  std::mutex fd_mutex_;  // abort() against close()
  std::string peer_;
  std::chrono::milliseconds send_timeout_;
  FrameReader reader_{kMaxUnauthenticatedPayload};
  std::atomic<bool> broken_{false};
  std::vector<RegionInfo> no_regions_;
};

// "a.b.c.d:port" of a socket address.
std::string socket_address_text(const sockaddr_storage& ss);
// Connects to `address` within `timeout`; returns the socket.
Result<int> tcp_connect(const sockaddr_in& address, const std::string& name, std::chrono::milliseconds timeout);

}  // namespace vmha
