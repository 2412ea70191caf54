#include "vmha/checkpoint/checkpoint_receiver.h"

#include <utility>
#include <vector>

#include "vmha/protocol/crc32c.h"

namespace vmha {
namespace {

constexpr std::size_t kMaxReadBytes = 4u << 20;  // cap on one coalesced read

CheckpointReceiver::Step make_step(CheckpointReceiver::Event e, std::uint64_t epoch, std::string reason = {}) {
  CheckpointReceiver::Step s;
  s.event = e;
  s.epoch = epoch;
  s.reason = std::move(reason);
  return s;
}

}  // namespace

CheckpointReceiver::CheckpointReceiver(Channel& channel, ImageStore& store, Lease& lease)
    : channel_(channel), store_(store), lease_(lease) {}

Status CheckpointReceiver::protocol_error(Status s) {
  store_.abort(s.message());
  (void)channel_.send(ErrorMsg{s.message()}.to_frame());
  return s;
}

Status CheckpointReceiver::on_page_list(const Frame& f) {
  auto msg = PageListMsg::from(f);
  if (!msg.ok()) return protocol_error(msg.status());
  const PageListMsg& m = msg.value();
  if (store_.staging_epoch() == 0 || m.epoch != store_.staging_epoch())
    return protocol_error(Status::error("PageList for checkpoint " + std::to_string(m.epoch) + " while receiving " +
                                        std::to_string(store_.staging_epoch())));
  const std::size_t ps = store_.page_size();
  if (m.flags & PageListMsg::kZeroPages) {
    for (const PageRef& r : m.pages)
      if (Status s = store_.stage_zero(r.page); !s.ok()) return protocol_error(s.context("PageList: "));
    ++lists_this_epoch_;
    ++stats_.page_lists;
    stats_.zero_pages += m.pages.size();
    if (m.flags & PageListMsg::kNotifyWhenPulled)
      return channel_.send(PagesPulledMsg{m.epoch, m.seq, static_cast<std::uint32_t>(m.pages.size())}.to_frame());
    return {};
  }
  std::vector<PullOp> ops;
  ops.reserve(m.pages.size());
  std::vector<std::uint8_t*> dests(m.pages.size());
  for (std::size_t i = 0; i < m.pages.size(); ++i) {
    auto dest = store_.stage_page(m.pages[i].page);
    if (!dest.ok()) return protocol_error(dest.status().context("PageList: "));
    dests[i] = dest.value();
    // Coalesce: next page in the image and next offset in the source region.
    if (!ops.empty()) {
      PullOp& last = ops.back();
      if (static_cast<std::uint8_t*>(last.dest) + last.length == dest.value() &&
          last.offset + last.length == m.pages[i].offset && last.length + ps <= kMaxReadBytes) {
        last.length += ps;
        continue;
      }
    }
    ops.push_back(PullOp{m.region, m.pages[i].offset, dest.value(), ps});
  }
  if (Status s = channel_.pull(ops); !s.ok()) {
    store_.abort("pull failed: " + s.message());
    return s.context("checkpoint " + std::to_string(m.epoch) + ": ");
  }
  if (m.flags & PageListMsg::kHasChecksums) {
    for (std::size_t i = 0; i < m.pages.size(); ++i) {
      std::uint32_t got = crc32c(0, dests[i], ps);
      if (got != m.crcs[i])
        return protocol_error(
            Status::error("checkpoint " + std::to_string(m.epoch) + ": page " + std::to_string(m.pages[i].page) +
                          " read from the primary does not match its checksum (torn or corrupted read)"));
    }
  }
  ++lists_this_epoch_;
  ++stats_.page_lists;
  stats_.pages_pulled += m.pages.size();
  stats_.bytes_pulled += m.pages.size() * ps;
  stats_.reads += ops.size();
  if (m.flags & PageListMsg::kNotifyWhenPulled)
    return channel_.send(PagesPulledMsg{m.epoch, m.seq, static_cast<std::uint32_t>(m.pages.size())}.to_frame());
  return {};
}

Result<CheckpointReceiver::Step> CheckpointReceiver::on_end(const Frame& f) {
  auto msg = EndMsg::from(f);
  if (!msg.ok()) return protocol_error(msg.status());
  const EndMsg& m = msg.value();
  Status s;
  if (m.page_lists != lists_this_epoch_) {
    s = Status::error("checkpoint " + std::to_string(m.epoch) + " refused: received " +
                      std::to_string(lists_this_epoch_) + " page lists, primary sent " + std::to_string(m.page_lists));
    store_.abort(s.message());
  } else {
    s = store_.commit(CheckpointSummary{m.epoch, m.distinct_pages, m.state_length, m.state_crc});
  }
  lists_this_epoch_ = 0;
  if (!s.ok()) {
    (void)channel_.send(NackMsg{m.epoch, s.message()}.to_frame());
    return s;
  }
  ++stats_.commits;
  if (Status a = channel_.send(AckMsg{m.epoch}.to_frame()); !a.ok()) return a;
  return make_step(Event::kCommitted, m.epoch);
}

Result<CheckpointReceiver::Step> CheckpointReceiver::step(std::chrono::milliseconds timeout) {
  auto f = channel_.receive(timeout);
  if (!f.ok()) {
    if (Channel::timed_out(f.status())) return Step{};
    lease_.connection_lost();
    store_.abort(f.status().message());
    return f.status();
  }
  lease_.heard(Lease::Clock::now());
  auto step = handle(f.value());
  lease_.heard(Lease::Clock::now());
  return step;
}

Result<CheckpointReceiver::Step> CheckpointReceiver::handle(const Frame& frame) {
  switch (frame.type) {
    case MessageType::kBegin: {
      auto m = BeginMsg::from(frame);
      if (!m.ok()) return protocol_error(m.status());
      lists_this_epoch_ = 0;
      if (Status s = store_.begin(m.value().epoch); !s.ok()) return protocol_error(s);
      return make_step(Event::kProgress, m.value().epoch);
    }
    case MessageType::kPageList: {
      if (Status s = on_page_list(frame); !s.ok()) return s;
      return make_step(Event::kProgress, frame.epoch);
    }
    case MessageType::kState: {
      auto m = StateMsg::from(frame);
      if (!m.ok()) return protocol_error(m.status());
      if (m.value().epoch != store_.staging_epoch())
        return protocol_error(Status::error("State for checkpoint " + std::to_string(m.value().epoch) +
                                            " while receiving " + std::to_string(store_.staging_epoch())));
      if (Status s = store_.stage_state(std::move(m.value().blob)); !s.ok()) return protocol_error(s);
      return make_step(Event::kProgress, frame.epoch);
    }
    case MessageType::kEnd:
      return on_end(frame);
    case MessageType::kHeartbeat: {
      auto m = HeartbeatMsg::from(frame);
      if (!m.ok()) return protocol_error(m.status());
      ++stats_.heartbeats;
      if (Status s = channel_.send(HeartbeatMsg{m.value().seq, store_.committed_epoch()}.to_frame()); !s.ok()) return s;
      return make_step(Event::kProgress, 0);
    }
    case MessageType::kError: {
      auto m = ErrorMsg::from(frame);
      Status s = Status::error("primary " + channel_.peer() +
                               " reported an error: " + (m.ok() ? m.value().reason : m.status().message()));
      store_.abort(s.message());
      return s;
    }
    case MessageType::kBye:
      store_.abort("primary said goodbye");
      return make_step(Event::kBye, 0);
    case MessageType::kStandDown: {
      auto m = StandDownMsg::from(frame);
      if (!m.ok()) return protocol_error(m.status());
      store_.abort("the primary went on without this backup");
      return make_step(Event::kStandDown, 0, m.value().reason);
    }
    default:
      return protocol_error(Status::error("unexpected " + message_type_name(static_cast<std::uint16_t>(frame.type)) +
                                          " message from the primary"));
  }
}

}  // namespace vmha
