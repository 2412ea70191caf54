// Internal to the UCX transport: the UCP context and worker shared by a
// transport and its channels, the worker's progress thread, and waiting.
#pragma once

#include <ucp/api/ucp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "vmha/protocol/status.h"
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
  ucp_worker_h worker() const { return worker_; }
  const UcxOptions& options() const { return options_; }

  unsigned progress() { return ucp_worker_progress(worker_); }
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
  std::thread progress_thread_;
};

}  // namespace vmha::ucx
