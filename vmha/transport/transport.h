// The replication transport seam. The epoch manager and the backup drive a
// Channel without knowing how bytes move (UCX today: shared memory / CMA on one
// host, TCP between hosts, RDMA READ where a NIC exists).
//
// Roles: the backup listens and accepts; the primary registers its memory
// regions once, then connects. A Channel is returned only after both ends have
// authenticated each other; only then does the primary send its remote keys.
// Before authentication a peer reaches nothing but vmha's own handshake code
// (see ucx_transport.h): no third-party parser sees unauthenticated bytes.
//
// Control messages are whole frames (vmha/protocol/frame.h) in order; page data
// moves by one-sided reads that the backup issues (pull) while the primary's
// CPU keeps running the guest.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/protocol/frame.h"
#include "vmha/protocol/messages.h"
#include "vmha/transport/auth.h"

namespace vmha {

// One one-sided read: `length` bytes at `offset` in the peer's region `region`
// into local memory at `dest`.
struct PullOp {
  std::uint32_t region = 0;
  std::uint64_t offset = 0;
  void* dest = nullptr;
  std::size_t length = 0;
};

class Channel {
 public:
  virtual ~Channel() = default;

  // Sends one frame. Thread-safe; frames from one thread arrive in order.
  Status send(const Frame& frame) { return send_encoded(encode_frame(frame)); }
  // Sends bytes already framed by encode_frame (tests use it to inject damage).
  virtual Status send_encoded(std::span<const std::uint8_t> bytes) = 0;

  // Next whole, verified frame. Timeout: an error whose message starts with
  // "timeout"; timed_out() tells it apart. Corrupted or truncated input and a
  // lost connection are errors; the channel is unusable afterwards.
  virtual Result<Frame> receive(std::chrono::milliseconds timeout) = 0;
  static bool timed_out(const Status& s) { return s.message().rfind("timeout", 0) == 0; }

  // Backup side: reads all ops (many in flight), returns when every one has
  // completed or on the first error. Offsets are checked against the regions.
  virtual Status pull(std::span<const PullOp> ops) = 0;
  // Backup side: the regions the primary exposed.
  virtual const std::vector<RegionInfo>& remote_regions() const = 0;

  virtual bool connected() const = 0;
  virtual std::string peer() const = 0;  // "host:port" for messages
  // When the peer's process was last heard alive on a path of its own,
  // beside the data (a heartbeat every few milliseconds on the socket the
  // handshake ran on): a lease measured on it never waits behind a page
  // transfer, whatever the guest's size. The epoch of the clock when the
  // channel has no such path (callers then count messages).
  virtual std::chrono::steady_clock::time_point liveness() const { return {}; }
  // Orderly close: gives the peer up to ~200 ms to read the last messages and
  // close first, then closes. Safe to call twice.
  virtual void close() = 0;
};

struct LocalRegion {
  std::uint32_t id = 0;
  void* base = nullptr;
  std::size_t length = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Primary, before connect() (regions are announced at connection time); each
  // region is registered once, for the transport's lifetime.
  //
  // allocate_region: memory the peer reads directly. Use it for guest memory:
  // on one host UCX gives POSIX shared memory, so the backup's reads are plain
  // copies that never involve the primary's CPU (with register_region on
  // ordinary memory, UCX 1.13 emulates those reads through the primary's
  // worker); with an RDMA NIC it is registered for RDMA READ. Page-aligned;
  // contents unspecified (fresh mappings read as zero).
  virtual Result<LocalRegion> allocate_region(std::size_t length) = 0;
  // register_region: exposes existing memory; returns its id.
  virtual Result<std::uint32_t> register_region(void* base, std::size_t length) = 0;
  virtual Result<std::unique_ptr<Channel>> connect(const std::string& address, const Authenticator& auth,
                                                   std::chrono::milliseconds timeout) = 0;

  // Backup: listens on "host:port" (port 0: any; see listen_address()).
  virtual Status listen(const std::string& address) = 0;
  virtual std::string listen_address() const = 0;
  // Next authenticated peer. A peer that fails authentication is refused and
  // reported as an error (the caller may accept again); a timeout likewise.
  // Peers are authenticated concurrently, so a silent one does not hold up
  // the real primary.
  virtual Result<std::unique_ptr<Channel>> accept(const Authenticator& auth, std::chrono::milliseconds timeout) = 0;
};

// "host:port" -> host and port, with a clear error naming what is wrong.
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
Result<HostPort> parse_host_port(const std::string& address);

}  // namespace vmha
