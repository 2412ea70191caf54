// Internal to the transport: the backup's listening socket, bound exactly to
// the address it was given, and the authentication of whoever connects.
//
// A connection costs nothing until it speaks: accept() takes every
// connection as it comes (the kernel's backlog never fills) and only waits
// on it, up to kFirstBytesWithin and at most kMaxWaiting at once (the oldest
// is dropped for a new one); a real primary sends its Hello at once. A peer
// that sends gets a handshake of its own (one thread each, at most
// kMaxConcurrentHandshakes, kMaxHandshakesPerAddress from one address),
// bounded by the handshake timeout and kMaxHandshake: a peer that connects
// and stays silent, or trickles bytes, delays nobody else; the real primary
// is authenticated while it waits. A peer that fails is dropped and
// reported; accepting continues with the next call.
#pragma once

#include <netinet/in.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "vmha/transport/auth.h"
#include "vmha/transport/socket_channel.h"

namespace vmha {

class HandshakeListener {
 public:
  static constexpr std::size_t kMaxConcurrentHandshakes = 64;
  static constexpr std::size_t kMaxHandshakesPerAddress = 8;
  static constexpr std::size_t kMaxWaiting = 1024;
  static constexpr std::chrono::milliseconds kFirstBytesWithin{1000};
  static constexpr std::chrono::milliseconds kMaxHandshake{2000};

  static Result<std::unique_ptr<HandshakeListener>> open(const sockaddr_in& address, const std::string& name);
  ~HandshakeListener();
  HandshakeListener(const HandshakeListener&) = delete;
  HandshakeListener& operator=(const HandshakeListener&) = delete;

  // The bound address ("127.0.0.1:41234" when port 0 was asked for).
  const std::string& address() const { return address_; }

  // The next peer that passed authenticate_as_backup, or the error of one that
  // failed (reported once no other handshake is in progress, so a failing
  // peer never hides a succeeding one), or a timeout. Handshakes still in
  // progress when this returns are cancelled: no thread outlives the call,
  // so `auth` needs to live only for the call.
  Result<std::unique_ptr<SocketChannel>> accept(const Authenticator& auth, std::chrono::milliseconds handshake_timeout,
                                                std::chrono::milliseconds timeout,
                                                std::chrono::milliseconds send_timeout);

 private:
  HandshakeListener(int fd, int wake_fd, std::string address)
      : fd_(fd), wake_fd_(wake_fd), address_(std::move(address)) {}

  int fd_;       // listening socket
  int wake_fd_;  // eventfd: a handshake finished
  std::string address_;
};

}  // namespace vmha
