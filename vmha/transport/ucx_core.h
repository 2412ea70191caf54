// Internal to the UCX transport: the UCP context and worker shared by a
// transport and its channels, the worker's progress thread, and waiting.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/transport/ucx_transport.h"

namespace vmha::ucx {

using Clock = std::chrono::steady_clock;

std::string status_text(ucs_status_t s);

class Core {
 public:
  static Result<std::shared_ptr<Core>> create(const UcxOptions& options);
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  ucp_context_h context() const { return context_; }
  // Null until ensure_worker(): the worker (and UCX's listening sockets) is
  // created only once a peer has authenticated.
  ucp_worker_h worker() const { return worker_; }
  Status ensure_worker();
  // This worker's address, for the peer's ucp_ep_create.
  Result<std::vector<std::uint8_t>> worker_address();
  const UcxOptions& options() const { return options_; }
  // The UCX_NET_DEVICES value vmha chose ("" when it left UCX's setting).
  const std::string& net_devices() const { return net_devices_; }

  unsigned progress() { return worker_ ? ucp_worker_progress(worker_) : 0; }
  // The side whose memory is read (primary) progresses its worker from a
  // thread: emulated one-sided reads (tcp) need it while the guest runs.
  void start_progress_thread();
  // Progresses; if nothing happened, sleeps ~20 us (never past `deadline`).
  void progress_or_wait(Clock::time_point deadline);

 private:
  explicit Core(const UcxOptions& o) : options_(o) {}
  void progress_loop();

  UcxOptions options_;
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  std::atomic<bool> stop_{false};
  std::string net_devices_;  // what UCX_NET_DEVICES was set to ("" if not)
  std::thread progress_thread_;
};

}  // namespace vmha::ucx
