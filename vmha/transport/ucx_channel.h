// Internal to the UCX transport: one connection (a UCP endpoint). Control frames
// travel on the endpoint's stream; pages are pulled with ucp_get_nbx against the
// rkeys the primary sent after authentication.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vmha/transport/transport.h"
#include "vmha/transport/ucx_core.h"

namespace vmha::ucx {

struct EndpointState {
  std::atomic<bool> failed{false};
  std::atomic<int> error{UCS_OK};
};

class UcxChannel final : public Channel {
 public:
  UcxChannel(std::shared_ptr<Core> core, std::string peer);
  ~UcxChannel() override;

  // Creates the endpoint to the peer's worker (both sides do; UCX pairs the
  // two endpoints).
  Status open(std::span<const std::uint8_t> peer_worker_address);
  // Takes the socket the handshake ran on, from now on the liveness path:
  // a thread writes a byte on it every kLivenessBeat and reads the peer's
  // (liveness()); its end of file says the peer is gone (immediately, where
  // UCX's shared-memory keepalive takes seconds).
  void watch_peer_socket(int fd);
  static constexpr std::chrono::milliseconds kLivenessBeat{20};
  std::chrono::steady_clock::time_point liveness() const override;
  // Before authentication only small frames are accepted.
  void set_max_payload(std::uint32_t n) { max_payload_ = n; }
  // Backup: unpacks the primary's rkeys.
  Status adopt_regions(RegionsMsg regions);
  // Primary: prints lanes after the handshake (see print_endpoint_if_asked).
  void connected_hook() const { print_endpoint_if_asked(); }

  Status send_encoded(std::span<const std::uint8_t> bytes) override;
  Result<Frame> receive(std::chrono::milliseconds timeout) override;
  Status pull(std::span<const PullOp> ops) override;
  const std::vector<RegionInfo>& remote_regions() const override { return regions_; }
  bool connected() const override { return ep_ != nullptr && !state_->failed && !broken_; }
  std::string peer() const override { return peer_; }
  // Lingers up to 200 ms for the peer to close first (see the .cc), then closes.
  void close() override;
  void linger(std::chrono::milliseconds timeout);

 private:
  Status lost(const std::string& doing) const;
  // The UCX endpoint failed or the peer's socket closed.
  bool peer_failed();
  void close_peer_socket();
  void print_endpoint_if_asked() const;
  void mark_broken(const std::string& why);
  Result<Frame> take_frame(bool* have);
  Result<Frame> fail(Status s);

  std::shared_ptr<Core> core_;
  std::string peer_;
  ucp_ep_h ep_ = nullptr;
  std::unique_ptr<EndpointState> state_ = std::make_unique<EndpointState>();
  std::mutex send_mutex_;
  std::mutex receive_mutex_;
  std::vector<std::uint8_t> rx_;
  std::size_t rx_start_ = 0;
  std::uint32_t max_payload_ = kMaxFramePayload;
  // A bad frame arrived or an operation timed out: the stream can no longer be
  // trusted, and close() must force pending operations out.
  std::atomic<bool> broken_{false};
  mutable std::mutex broken_mutex_;
  std::string broken_reason_;
  std::vector<RegionInfo> regions_;
  std::vector<ucp_rkey_h> rkeys_;
  int liveness_fd_ = -1;
  std::atomic<std::int64_t> last_liveness_check_{0};  // steady clock, us
  // The liveness thread: beats on liveness_fd_, notes the peer's beats and
  // its end of file (state_->failed).
  std::thread liveness_thread_;
  std::atomic<bool> liveness_stop_{false};
  std::atomic<std::int64_t> heard_us_{0};  // steady clock, us: the peer's last beat
  void liveness_loop(int fd);
};

}  // namespace vmha::ucx
