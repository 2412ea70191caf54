#include "vmha/transport/ucx_channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace vmha::ucx {
namespace {

constexpr std::chrono::milliseconds kCloseLinger{200};

void on_endpoint_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* st = static_cast<EndpointState*>(arg);
  st->error = status;
  st->failed = true;
}

// A send whose buffer must outlive the caller if it gives up waiting: the
// callback and the waiter each hold a reference; the last one frees it.
struct SendOp {
  std::vector<std::uint8_t> data;
  std::atomic<bool> done{false};
  std::atomic<int> status{UCS_OK};
  std::atomic<int> refs{2};
  void release() {
    if (refs.fetch_sub(1) == 1) delete this;
  }
};

void on_send_done(void* request, ucs_status_t status, void* user) {
  auto* op = static_cast<SendOp*>(user);
  op->status = status;
  op->done = true;
  ucp_request_free(request);
  op->release();
}

struct PullBatch {
  std::atomic<std::size_t> outstanding{0};
  std::atomic<int> first_error{UCS_OK};
};

void on_get_done(void* request, ucs_status_t status, void* user) {
  auto* b = static_cast<PullBatch*>(user);
  if (status != UCS_OK) {
    int expected = UCS_OK;
    b->first_error.compare_exchange_strong(expected, status);
  }
  b->outstanding.fetch_sub(1);
  ucp_request_free(request);
}

ucp_ep_params_t endpoint_params(EndpointState* st) {
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = on_endpoint_error;
  p.err_handler.arg = st;
  return p;
}

}  // namespace

UcxChannel::UcxChannel(std::shared_ptr<Core> core, std::string peer) : core_(std::move(core)), peer_(std::move(peer)) {}

UcxChannel::~UcxChannel() { close(); }

void UcxChannel::watch_peer_socket(int fd) {
  close_peer_socket();
  liveness_fd_ = fd;
  heard_us_ = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
  liveness_stop_ = false;
  try {
    liveness_thread_ = std::thread([this, fd] { liveness_loop(fd); });
  } catch (const std::system_error&) {
    // No thread: the socket still tells the peer's end (peer_failed), the
    // lease counts messages as before.
  }
}

void UcxChannel::liveness_loop(int fd) {
  const std::uint8_t beat = 'h';
  while (!liveness_stop_.load()) {
    if (::send(fd, &beat, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
        errno != EINTR)
      break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kLivenessBeat.count())) <= 0) continue;
    std::uint8_t b[256];
    ssize_t n = ::recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (n > 0) {
      heard_us_ = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (liveness_stop_.load()) break;  // our own shutdown, not the peer's end
    // End of file or an error: its process closed the connection or died
    // (the kernel closes its sockets).
    state_->error = UCS_ERR_CONNECTION_RESET;
    state_->failed = true;
    break;
  }
}

std::chrono::steady_clock::time_point UcxChannel::liveness() const {
  if (!liveness_thread_.joinable()) return {};
  return Clock::time_point(std::chrono::microseconds(heard_us_.load()));
}

bool UcxChannel::peer_failed() {
  if (state_->failed) return true;
  if (liveness_fd_ < 0 || liveness_thread_.joinable()) return false;
  // At most once a millisecond: callers spin on this while progressing.
  std::int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
  auto last = last_liveness_check_.load(std::memory_order_relaxed);
  if (now - last < 1000 || !last_liveness_check_.compare_exchange_strong(last, now)) return false;
  std::uint8_t b[64];
  ssize_t n = ::recv(liveness_fd_, b, sizeof b, MSG_DONTWAIT);
  // The peer never writes to this socket after the handshake: end of file or
  // an error means its process closed the connection or died (the kernel
  // closes its sockets), which UCX itself may notice only at its keepalive.
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    state_->error = UCS_ERR_CONNECTION_RESET;
    state_->failed = true;
  }
  return state_->failed;
}

Status UcxChannel::open(std::span<const std::uint8_t> peer_worker_address) {
  ucp_ep_params_t p = endpoint_params(state_.get());
  p.field_mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  p.address = reinterpret_cast<const ucp_address_t*>(peer_worker_address.data());
  ucs_status_t s = ucp_ep_create(core_->worker(), &p, &ep_);
  if (s != UCS_OK) return Status::error("cannot connect UCX to " + peer_ + ": " + status_text(s));
  return {};
}

void UcxChannel::mark_broken(const std::string& why) {
  std::lock_guard<std::mutex> lock(broken_mutex_);
  if (broken_reason_.empty()) broken_reason_ = why;
  broken_ = true;
}

void UcxChannel::print_endpoint_if_asked() const {
  // VMHA_UCX_SHOW_LANES=1 prints which UCX transports (lanes) carry this
  // connection: the way to check what UCX_TLS actually selected.
  const char* v = std::getenv("VMHA_UCX_SHOW_LANES");
  if (v != nullptr && *v == '1' && ep_ != nullptr) ucp_ep_print_info(ep_, stderr);
}

Status UcxChannel::lost(const std::string& doing) const {
  if (broken_) {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    return Status::error("connection to " + peer_ + " unusable after an earlier error: " + broken_reason_);
  }
  std::string why = state_->failed ? status_text(static_cast<ucs_status_t>(state_->error.load())) : "closed";
  return Status::error("connection to " + peer_ + " lost while " + doing + " (" + why + ")");
}

Status UcxChannel::send_encoded(std::span<const std::uint8_t> bytes) {
  std::lock_guard<std::mutex> lock(send_mutex_);
  if (!connected()) return lost("sending");
  auto* op = new SendOp;
  op->data.assign(bytes.begin(), bytes.end());
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = on_send_done;
  param.user_data = op;
  ucs_status_ptr_t req = ucp_stream_send_nbx(ep_, op->data.data(), op->data.size(), &param);
  if (req == nullptr) {  // completed in place
    delete op;
    return {};
  }
  if (UCS_PTR_IS_ERR(req)) {
    delete op;
    return Status::error("send to " + peer_ + " failed: " + status_text(UCS_PTR_STATUS(req)));
  }
  // The limit counts from the peer's last liveness beat, not from the start:
  // a backup busy with a large checkpoint reads late but beats all along
  // (the primary's send waited 10 s and lost a live backup of a 4 GiB
  // guest); one that is gone or stopped falls silent and the send fails.
  const auto start = Clock::now();
  auto deadline = [&] { return std::max(start, liveness()) + core_->options().send_timeout; };
  while (!op->done && !peer_failed() && Clock::now() < deadline()) core_->progress_or_wait(deadline());
  Status result;
  if (op->done && op->status != UCS_OK)
    result =
        Status::error("send to " + peer_ + " failed: " + status_text(static_cast<ucs_status_t>(op->status.load())));
  else if (!op->done) {
    result = state_->failed ? lost("sending") : Status::error("timeout: send to " + peer_ + " did not complete");
    mark_broken(result.message());
  }
  op->release();
  return result;
}

Result<Frame> UcxChannel::fail(Status s) {
  mark_broken(s.message());
  return s;
}

// Cuts one frame off the receive buffer if a whole one is there.
Result<Frame> UcxChannel::take_frame(bool* have) {
  *have = false;
  std::span<const std::uint8_t> buf(rx_.data() + rx_start_, rx_.size() - rx_start_);
  if (buf.size() < kFrameHeaderSize) return Frame{};
  auto h = decode_frame_header(buf, max_payload_);
  if (!h.ok()) return fail(h.status().context("from " + peer_ + ": "));
  std::size_t total = kFrameHeaderSize + h.value().payload_length;
  if (buf.size() < total) return Frame{};
  auto payload = buf.subspan(kFrameHeaderSize, h.value().payload_length);
  if (Status s = verify_frame_payload(h.value(), payload); !s.ok()) return fail(s.context("from " + peer_ + ": "));
  Frame f{h.value().type, h.value().epoch, {payload.begin(), payload.end()}};
  rx_start_ += total;
  if (rx_start_ == rx_.size()) {
    rx_.clear();
    rx_start_ = 0;
  } else if (rx_start_ > (1u << 20)) {
    rx_.erase(rx_.begin(), rx_.begin() + static_cast<std::ptrdiff_t>(rx_start_));
    rx_start_ = 0;
  }
  *have = true;
  return f;
}

Result<Frame> UcxChannel::receive(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(receive_mutex_);
  if (broken_ || ep_ == nullptr) return lost("receiving");
  auto deadline = Clock::now() + timeout;
  int late_looks = 0;
  for (;;) {
    bool have = false;
    auto f = take_frame(&have);
    if (!f.ok() || have) return f;
    // Drain what the endpoint holds before judging a failure: data sent just
    // before the peer went away is still delivered.
    std::size_t len = 0;
    ucs_status_ptr_t data = ucp_stream_recv_data_nb(ep_, &len);
    if (data != nullptr && !UCS_PTR_IS_ERR(data)) {
      auto* p = static_cast<const std::uint8_t*>(data);
      rx_.insert(rx_.end(), p, p + len);
      ucp_stream_data_release(ep_, data);
      continue;
    }
    if (peer_failed() || UCS_PTR_IS_ERR(data)) {
      std::size_t pending = rx_.size() - rx_start_;
      if (pending == 0) return fail(lost("receiving"));
      std::string what = "a frame";
      std::size_t expected = kFrameHeaderSize;
      if (pending >= kFrameHeaderSize) {
        auto h = decode_frame_header({rx_.data() + rx_start_, pending}, max_payload_);
        if (h.ok()) {
          what = "a " + message_type_name(static_cast<std::uint16_t>(h.value().type)) + " frame of epoch " +
                 std::to_string(h.value().epoch);
          expected += h.value().payload_length;
        }
      }
      return fail(lost("receiving")
                      .context("truncated " + what + " (" + std::to_string(pending) + " of " +
                               std::to_string(expected) + " bytes): "));
    }
    if (Clock::now() >= deadline) {
      // A process stalled past the deadline (stopped, descheduled on a
      // loaded host) did not progress the worker meanwhile: what the peer
      // sent may wait there unread. Look before calling it silence.
      if (late_looks++ < 16 && core_->progress() != 0) continue;
      return Status::error("timeout: no message from " + peer_ + " within " + std::to_string(timeout.count()) + " ms");
    }
    core_->progress_or_wait(deadline);
  }
}

Status UcxChannel::adopt_regions(RegionsMsg msg) {
  for (const auto& g : msg.regions) {
    ucp_rkey_h rkey = nullptr;
    ucs_status_t s = ucp_ep_rkey_unpack(ep_, g.rkey.data(), &rkey);
    if (s != UCS_OK)
      return Status::error("cannot unpack the remote key of region " + std::to_string(g.id) + " from " + peer_ + ": " +
                           status_text(s));
    if (g.id != rkeys_.size()) {
      ucp_rkey_destroy(rkey);
      return Status::error("regions from " + peer_ + " are not numbered 0, 1, ...");
    }
    rkeys_.push_back(rkey);
  }
  regions_ = std::move(msg.regions);
  print_endpoint_if_asked();
  return {};
}

Status UcxChannel::pull(std::span<const PullOp> ops) {
  if (!connected()) return lost("pulling pages");
  for (const auto& op : ops) {
    if (op.region >= regions_.size())
      return Status::error("pull from unknown region " + std::to_string(op.region) + " of " + peer_);
    const auto& g = regions_[op.region];
    if (op.offset > g.length || op.length > g.length - op.offset)
      return Status::error("pull of " + std::to_string(op.length) + " bytes at offset " + std::to_string(op.offset) +
                           " is outside region " + std::to_string(op.region) + " (" + std::to_string(g.length) +
                           " bytes)");
  }
  auto* batch = new PullBatch;
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.send = on_get_done;
  param.user_data = batch;
  const std::size_t window = std::max<std::size_t>(1, core_->options().max_outstanding_reads);
  auto deadline = Clock::now() + core_->options().pull_timeout;
  Status result;
  for (const auto& op : ops) {
    while (batch->outstanding >= window && !peer_failed() && Clock::now() < deadline) core_->progress();
    if (batch->outstanding >= window || state_->failed || batch->first_error != UCS_OK) break;
    batch->outstanding.fetch_add(1);
    ucs_status_ptr_t req =
        ucp_get_nbx(ep_, op.dest, op.length, regions_[op.region].base + op.offset, rkeys_[op.region], &param);
    if (req == nullptr) {
      batch->outstanding.fetch_sub(1);
    } else if (UCS_PTR_IS_ERR(req)) {
      batch->outstanding.fetch_sub(1);
      result = Status::error("get from " + peer_ + " failed: " + status_text(UCS_PTR_STATUS(req)));
      break;
    }
  }
  while (batch->outstanding > 0 && !peer_failed() && Clock::now() < deadline) core_->progress();
  if (result.ok() && batch->first_error != UCS_OK)
    result = Status::error("get from " + peer_ +
                           " failed: " + status_text(static_cast<ucs_status_t>(batch->first_error.load())));
  if (result.ok() && state_->failed) result = lost("pulling pages");
  if (result.ok() && batch->outstanding > 0)
    result = Status::error("timeout: pull from " + peer_ + " did not complete within " +
                           std::to_string(core_->options().pull_timeout.count()) + " ms");
  if (batch->outstanding > 0) {
    // Reads still target the caller's memory: cancel them by closing the
    // endpoint and wait (bounded) for their completions before returning.
    mark_broken(result.message());
    close();
    auto until = Clock::now() + std::chrono::seconds(2);
    while (batch->outstanding > 0 && Clock::now() < until) core_->progress();
  }
  if (batch->outstanding == 0) delete batch;  // else leaked: a late callback may still touch it
  return result;
}

void UcxChannel::linger(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (ep_ != nullptr && !peer_failed() && Clock::now() < deadline) core_->progress_or_wait(deadline);
}

void UcxChannel::close() {
  if (ep_ == nullptr) {
    close_peer_socket();
    return;
  }
  // UCX drops stream data that is still queued when an endpoint fails, so the
  // peer would miss our last message (a refusal, a Nack) if we reset the
  // connection at once: give it a moment to read and close first.
  linger(kCloseLinger);
  for (auto k : rkeys_) ucp_rkey_destroy(k);
  rkeys_.clear();
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = (state_->failed || broken_) ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  ucs_status_ptr_t req = ucp_ep_close_nbx(ep_, &param);
  if (req != nullptr && !UCS_PTR_IS_ERR(req)) {
    auto deadline = Clock::now() + std::chrono::seconds(2);
    while (ucp_request_check_status(req) == UCS_INPROGRESS && Clock::now() < deadline)
      core_->progress_or_wait(deadline);
    if (ucp_request_check_status(req) == UCS_INPROGRESS) {
      // The peer does not answer: give up the orderly close.
      ucp_request_cancel(core_->worker(), req);
    }
    ucp_request_free(req);
  }
  ep_ = nullptr;
  close_peer_socket();  // tells the peer at once
}

void UcxChannel::close_peer_socket() {
  if (liveness_thread_.joinable()) {
    liveness_stop_ = true;
    if (liveness_fd_ >= 0) ::shutdown(liveness_fd_, SHUT_RDWR);  // wakes its poll; the peer sees the end
    liveness_thread_.join();
  }
  if (liveness_fd_ >= 0) ::close(liveness_fd_);
  liveness_fd_ = -1;
}

}  // namespace vmha::ucx
