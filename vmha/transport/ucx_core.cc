#include "vmha/transport/ucx_core.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>

#include "vmha/transport/net_devices.h"

namespace vmha::ucx {

namespace {
constexpr const char* kLoopbackTransports = "sm,self";
}  // namespace

std::string status_text(ucs_status_t s) { return ucs_status_string(s); }

Result<std::shared_ptr<Core>> Core::create(const UcxOptions& options) {
  std::shared_ptr<Core> core(new Core(options));
  ucp_config_t* config = nullptr;
  ucs_status_t s = ucp_config_read(nullptr, nullptr, &config);
  if (s != UCS_OK) return Status::error("UCX: cannot read configuration: " + status_text(s));
  if (!options.transports.empty()) {
    s = ucp_config_modify(config, "TLS", options.transports.c_str());
    if (s != UCS_OK) {
      ucp_config_release(config);
      return Status::error("UCX: bad transport list '" + options.transports + "': " + status_text(s));
    }
  }
  // Shared-memory transports join endpoints that detect a dead peer
  // (UCP_ERR_HANDLING_MODE_PEER) only with this set; without it UCX falls back
  // to TCP on one host.
  // The list in effect: the option, else UCX's own UCX_TLS.
  const char* env_tls = std::getenv("UCX_TLS");
  const std::string tls = !options.transports.empty() ? options.transports : env_tls ? env_tls : "";
  auto lists = [&tls](const char* name) { return tls.find(name) != std::string::npos; };
  bool explicit_list = !tls.empty() && tls[0] != '^' && !lists("all");
  bool may_use_shm = !explicit_list || lists("sm") || lists("shm") || lists("mm") || lists("posix") || lists("sysv");
  if (may_use_shm && std::getenv("UCX_MM_ERROR_HANDLING") == nullptr) {
    s = ucp_config_modify(config, "MM_ERROR_HANDLING", "y");
    if (s != UCS_OK) {
      ucp_config_release(config);
      return Status::error("UCX: cannot enable MM_ERROR_HANDLING: " + status_text(s));
    }
  }
  // UCX's tcp transport listens on every device it may use.
  if (!options.network_address.empty() && std::getenv("UCX_NET_DEVICES") == nullptr) {
    auto iface = interface_for_address(options.network_address);
    if (!iface.ok()) {
      ucp_config_release(config);
      return iface.status().context("UCX: cannot choose the network device: ");
    }
    // Loopback: the peer is on this host, where UCX picks shared memory
    // anyway; without a network transport UCX opens no socket at all.
    if (iface.value() == "lo" && tls.empty()) {
      s = ucp_config_modify(config, "TLS", kLoopbackTransports);
      if (s != UCS_OK) {
        ucp_config_release(config);
        return Status::error(std::string("UCX: cannot set TLS to ") + kLoopbackTransports + ": " + status_text(s));
      }
    }
    if (!iface.value().empty()) {
      core->net_devices_ = ucx_net_devices(iface.value());
      s = ucp_config_modify(config, "NET_DEVICES", core->net_devices_.c_str());
      if (s != UCS_OK) {
        ucp_config_release(config);
        return Status::error("UCX: cannot restrict NET_DEVICES to '" + core->net_devices_ + "': " + status_text(s));
      }
    }
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_STREAM;
  params.mt_workers_shared = 1;
  params.name = "vmha";
  s = ucp_init(&params, config, &core->context_);
  ucp_config_release(config);
  if (s != UCS_OK) return Status::error("UCX: ucp_init failed: " + status_text(s));

  return core;
}

Status Core::ensure_worker() {
  if (worker_ != nullptr) return {};
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;
  ucp_worker_h worker = nullptr;
  ucs_status_t s = ucp_worker_create(context_, &wp, &worker);
  if (s != UCS_OK) return Status::error("UCX: cannot create a worker: " + status_text(s));
  ucp_worker_attr_t attr{};
  attr.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
  if (ucp_worker_query(worker, &attr) == UCS_OK && attr.thread_mode != UCS_THREAD_MODE_MULTI) {
    ucp_worker_destroy(worker);
    return Status::error("UCX: this libucp was built without multi-thread support (--enable-mt)");
  }
  worker_ = worker;
  return {};
}

Result<std::vector<std::uint8_t>> Core::worker_address() {
  if (Status s = ensure_worker(); !s.ok()) return s;
  ucp_address_t* address = nullptr;
  std::size_t length = 0;
  ucs_status_t s = ucp_worker_get_address(worker_, &address, &length);
  if (s != UCS_OK) return Status::error("UCX: cannot get the worker address: " + status_text(s));
  auto* p = reinterpret_cast<const std::uint8_t*>(address);
  std::vector<std::uint8_t> out(p, p + length);
  ucp_worker_release_address(worker_, address);
  return out;
}

Core::~Core() {
  stop_ = true;
  if (progress_thread_.joinable()) progress_thread_.join();
  if (worker_) ucp_worker_destroy(worker_);
  if (context_) ucp_cleanup(context_);
}

void Core::progress_or_wait(Clock::time_point deadline) {
  if (progress() != 0) return;
  auto now = Clock::now();
  if (now >= deadline) return;
  // Nothing to do: sleep briefly instead of spinning (2-core hosts also run
  // the guest). Worker wake-up events (UCP_FEATURE_WAKEUP) are not used: with
  // them UCX 1.13 dropped shared-memory throughput several-fold here.
  auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count();
  timespec ts{0, static_cast<long>(std::min<long>(left, 20) * 1000)};
  ::nanosleep(&ts, nullptr);
}

void Core::start_progress_thread() {
  if (progress_thread_.joinable()) return;
  progress_thread_ = std::thread([this] { progress_loop(); });
}

void Core::progress_loop() {
  // Emulated RMA (tcp) and connection management need the worker progressed
  // even while the owner thread is busy running the guest.
  while (!stop_.load(std::memory_order_relaxed)) progress_or_wait(Clock::now() + std::chrono::milliseconds(1));
}

}  // namespace vmha::ucx
