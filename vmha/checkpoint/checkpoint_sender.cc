#include "vmha/checkpoint/checkpoint_sender.h"

#include <algorithm>

#include "vmha/protocol/crc32c.h"

namespace vmha {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds left(Clock::time_point deadline) {
  auto d = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return d.count() > 0 ? d : std::chrono::milliseconds(0);
}

}  // namespace

CheckpointSender::CheckpointSender(Channel& channel, std::uint64_t page_count)
    : channel_(channel), page_count_(page_count), bits_((page_count + 63) / 64, 0) {}

Status CheckpointSender::begin(std::uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (epoch <= epoch_) return Status::error("checkpoint " + std::to_string(epoch) + " after " + std::to_string(epoch_));
  for (auto w : touched_words_) bits_[w] = 0;
  touched_words_.clear();
  distinct_ = 0;
  lists_ = 0;
  have_state_ = false;
  epoch_ = epoch;
  open_ = true;
  return channel_.send(BeginMsg{epoch}.to_frame());
}

Status CheckpointSender::send_zero_pages(std::span<const std::uint64_t> pages) {
  if (pages.empty()) return {};
  std::vector<PageRef> refs;
  refs.reserve(pages.size());
  for (std::uint64_t p : pages) refs.push_back(PageRef{p, 0});
  std::lock_guard<std::mutex> lock(mutex_);
  return send_list(0, refs, {}, PageListMsg::kZeroPages, nullptr);
}

Status CheckpointSender::send_pages(std::uint32_t region, std::span<const PageRef> pages,
                                    std::span<const std::uint32_t> crcs, bool notify, std::uint32_t* seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  return send_list(region, pages, crcs, notify ? PageListMsg::kNotifyWhenPulled : 0, seq);
}

Status CheckpointSender::send_list(std::uint32_t region, std::span<const PageRef> pages,
                                   std::span<const std::uint32_t> crcs, std::uint8_t flags, std::uint32_t* seq) {
  const bool notify = flags & PageListMsg::kNotifyWhenPulled;
  if (!open_) return Status::error("send_pages outside a checkpoint");
  if (!crcs.empty() && crcs.size() != pages.size())
    return Status::error("send_pages: " + std::to_string(crcs.size()) + " checksums for " +
                         std::to_string(pages.size()) + " pages");
  for (const auto& p : pages) {
    if (p.page >= page_count_)
      return Status::error("send_pages: page " + std::to_string(p.page) + " outside the image (" +
                           std::to_string(page_count_) + " pages)");
  }
  for (std::size_t start = 0; start < pages.size() || (start == 0 && pages.empty()); start += kMaxPagesPerList) {
    std::size_t n = std::min(kMaxPagesPerList, pages.size() - start);
    bool last = start + n >= pages.size();
    PageListMsg m;
    m.epoch = epoch_;
    m.seq = next_seq_++;
    m.region = region;
    m.flags = flags & PageListMsg::kZeroPages;
    m.pages.assign(pages.begin() + static_cast<std::ptrdiff_t>(start),
                   pages.begin() + static_cast<std::ptrdiff_t>(start + n));
    if (!crcs.empty()) {
      m.flags |= PageListMsg::kHasChecksums;
      m.crcs.assign(crcs.begin() + static_cast<std::ptrdiff_t>(start),
                    crcs.begin() + static_cast<std::ptrdiff_t>(start + n));
    }
    if (notify && last) m.flags |= PageListMsg::kNotifyWhenPulled;
    if (Status s = channel_.send(m.to_frame()); !s.ok()) return s;
    ++lists_;
    if (seq) *seq = m.seq;
    if (pages.empty()) break;
  }
  for (const auto& p : pages) {
    std::uint64_t& w = bits_[p.page / 64];
    std::uint64_t bit = std::uint64_t{1} << (p.page % 64);
    if (!(w & bit)) {
      if (w == 0) touched_words_.push_back(p.page / 64);
      w |= bit;
      ++distinct_;
    }
  }
  return {};
}

Status CheckpointSender::send_state(std::span<const std::uint8_t> blob) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_) return Status::error("send_state outside a checkpoint");
  state_length_ = static_cast<std::uint32_t>(blob.size());
  state_crc_ = crc32c(blob);
  have_state_ = true;
  return channel_.send(StateMsg{epoch_, {blob.begin(), blob.end()}}.to_frame());
}

Status CheckpointSender::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!open_) return Status::error("end outside a checkpoint");
  if (!have_state_) return Status::error("checkpoint " + std::to_string(epoch_) + " has no state blob");
  open_ = false;
  return channel_.send(EndMsg{epoch_, distinct_, lists_, state_length_, state_crc_}.to_frame());
}

Status CheckpointSender::pump(std::chrono::milliseconds timeout) {
  auto f = channel_.receive(timeout);
  if (!f.ok()) return f.status();
  last_heard_ = Clock::now();
  const Frame& frame = f.value();
  switch (frame.type) {
    case MessageType::kAck: {
      auto m = AckMsg::from(frame);
      if (!m.ok()) return m.status();
      if (m.value().epoch > acked_) acked_ = m.value().epoch;
      return {};
    }
    case MessageType::kNack: {
      auto m = NackMsg::from(frame);
      refusal_ = "backup refused checkpoint " + std::to_string(frame.epoch) + ": " +
                 (m.ok() ? m.value().reason : m.status().message());
      return Status::error(refusal_);
    }
    case MessageType::kError: {
      auto m = ErrorMsg::from(frame);
      refusal_ = "backup reported an error: " + (m.ok() ? m.value().reason : m.status().message());
      return Status::error(refusal_);
    }
    case MessageType::kPagesPulled: {
      auto m = PagesPulledMsg::from(frame);
      if (!m.ok()) return m.status();
      if (m.value().seq > pulled_seq_) pulled_seq_ = m.value().seq;
      return {};
    }
    case MessageType::kHeartbeat: {
      auto m = HeartbeatMsg::from(frame);
      return m.ok() ? Status{} : m.status();
    }
    case MessageType::kBye:  // the backup's answer to StandDown: it will not take over
      stood_down_ = true;
      return {};
    default:
      return Status::error("unexpected " + message_type_name(static_cast<std::uint16_t>(frame.type)) +
                           " message from the backup");
  }
}

// Waits as long as the backup lives: `timeout` is how long it may stay
// silent, counted from the last message or liveness beat (transport.h), not
// from the start. A backup reading gigabytes of pages answers late but is
// heard all along; one that is gone is silent within the limit.
template <typename Done>
Status CheckpointSender::wait_until(Done done, std::chrono::milliseconds timeout, const std::string& what) {
  const auto started = Clock::now();
  auto next_beat = started + heartbeat_every_;
  auto heard = [&] { return std::max({started, last_heard_, channel_.liveness()}); };
  while (!done()) {
    if (!refusal_.empty()) return Status::error(refusal_);
    auto deadline = heard() + timeout;
    auto until = heartbeat_every_.count() > 0 ? std::min(deadline, next_beat) : deadline;
    Status s = pump(left(std::min(until, Clock::now() + std::chrono::milliseconds(50))));
    if (!s.ok() && !Channel::timed_out(s)) return s;
    if (done()) break;
    auto now = Clock::now();
    if (heartbeat_every_.count() > 0 && now >= next_beat) {
      if (Status hb = send_heartbeat(acked_); !hb.ok()) return hb;
      next_beat = now + heartbeat_every_;
    }
    if (now >= heard() + timeout)
      return Status::error("timeout: backup did not " + what + " and was silent for " +
                           std::to_string(timeout.count()) + " ms");
  }
  return {};
}

Status CheckpointSender::wait_pulled(std::uint32_t seq, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(rx_mutex_);
  return wait_until([&] { return pulled_seq_ >= seq; }, timeout, "confirm page list " + std::to_string(seq));
}

Status CheckpointSender::wait_ack(std::uint64_t epoch, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(rx_mutex_);
  return wait_until([&] { return acked_ >= epoch; }, timeout, "acknowledge checkpoint " + std::to_string(epoch));
}

Status CheckpointSender::send_heartbeat(std::uint64_t committed) {
  std::uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seq = ++heartbeat_seq_;
  }
  return channel_.send(HeartbeatMsg{seq, committed}.to_frame());
}

Status CheckpointSender::heartbeat() {
  std::uint64_t committed;
  {
    std::lock_guard<std::mutex> lock(rx_mutex_);
    committed = acked_;
  }
  return send_heartbeat(committed);
}

Status CheckpointSender::stand_down(const std::string& reason, std::chrono::milliseconds timeout) {
  if (Status s = channel_.send(StandDownMsg{reason}.to_frame()); !s.ok()) return s;
  std::lock_guard<std::mutex> lock(rx_mutex_);
  refusal_.clear();  // the loss that brought us here
  if (Status s = wait_until([&] { return stood_down_; }, timeout, "confirm that it stands down"); !s.ok()) return s;
  // It agreed; it stands down once it reads this (until then a lost
  // connection leaves it the takeover: vmha(1) Split brain).
  return channel_.send(StandDownMsg{"confirmed: " + reason}.to_frame());
}

Status CheckpointSender::poll(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(rx_mutex_);
  Status s = pump(timeout);
  return Channel::timed_out(s) ? Status{} : s;
}

std::uint64_t CheckpointSender::epoch() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return epoch_;
}
std::uint64_t CheckpointSender::acked_epoch() const {
  std::lock_guard<std::mutex> lock(rx_mutex_);
  return acked_;
}
std::uint64_t CheckpointSender::distinct_pages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return distinct_;
}
std::uint32_t CheckpointSender::page_lists() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lists_;
}
std::chrono::steady_clock::time_point CheckpointSender::last_heard() const {
  std::lock_guard<std::mutex> lock(rx_mutex_);
  return last_heard_;
}

}  // namespace vmha
