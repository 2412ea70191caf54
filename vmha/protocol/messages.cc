#include "vmha/protocol/messages.h"

#include <algorithm>

#include "vmha/protocol/wire_io.h"

namespace vmha {
namespace {

constexpr std::size_t kMaxText = 1024;  // reasons and method names
constexpr std::size_t kMaxRegions = 64;

Frame frame(MessageType t, std::uint64_t epoch, WireWriter& w) { return Frame{t, epoch, w.take()}; }

// Checks the frame type, then runs `read` and rejects errors and trailing bytes.
template <class Msg, class Read>
Result<Msg> decode(const Frame& f, MessageType expected, Read read) {
  std::string what = message_type_name(static_cast<std::uint16_t>(expected));
  if (f.type != expected)
    return Status::error("expected a " + what + " message, got " +
                         message_type_name(static_cast<std::uint16_t>(f.type)));
  WireReader r(f.payload);
  Msg m = read(r);
  if (r.ok() && r.remaining() != 0) r.set_error(std::to_string(r.remaining()) + " unexpected bytes after the payload");
  if (!r.ok()) return Status::error("malformed " + what + " payload: " + r.error());
  return m;
}

void put_text(WireWriter& w, const std::string& s) {
  w.blob({reinterpret_cast<const std::uint8_t*>(s.data()), std::min(s.size(), kMaxText)});
}
// Text from the peer (a reason, a method name) ends up in logs, the
// backup's among them, which its supervisor reads: every byte outside
// printable ASCII (and the backslash) arrives as \xNN, so a peer cannot
// write a line of its own ("\nvmha backup: primary lost; ...") or a
// terminal escape there.
std::string get_text(WireReader& r, const char* field) {
  auto b = r.blob(field);
  if (b.size() > kMaxText) r.set_error(std::string(field) + " longer than " + std::to_string(kMaxText));
  std::string out;
  out.reserve(b.size());
  for (std::uint8_t c : b) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}
void get_nonce(WireReader& r, Nonce& n) {
  auto b = r.bytes(kNonceSize, "nonce");
  if (b.size() == kNonceSize) std::copy(b.begin(), b.end(), n.begin());
}

}  // namespace

Frame HelloMsg::to_frame() const {
  WireWriter w;
  put_text(w, method);
  w.bytes(nonce);
  return frame(MessageType::kHello, 0, w);
}
Result<HelloMsg> HelloMsg::from(const Frame& f) {
  return decode<HelloMsg>(f, MessageType::kHello, [](WireReader& r) {
    HelloMsg m;
    m.method = get_text(r, "method");
    get_nonce(r, m.nonce);
    return m;
  });
}

Frame ChallengeMsg::to_frame() const {
  WireWriter w;
  w.bytes(nonce);
  w.blob(proof);
  return frame(MessageType::kChallenge, 0, w);
}
Result<ChallengeMsg> ChallengeMsg::from(const Frame& f) {
  return decode<ChallengeMsg>(f, MessageType::kChallenge, [](WireReader& r) {
    ChallengeMsg m;
    get_nonce(r, m.nonce);
    auto p = r.blob("proof");
    m.proof.assign(p.begin(), p.end());
    return m;
  });
}

Frame ResponseMsg::to_frame() const {
  WireWriter w;
  w.blob(proof);
  return frame(MessageType::kResponse, 0, w);
}
Result<ResponseMsg> ResponseMsg::from(const Frame& f) {
  return decode<ResponseMsg>(f, MessageType::kResponse, [](WireReader& r) {
    ResponseMsg m;
    auto p = r.blob("proof");
    m.proof.assign(p.begin(), p.end());
    return m;
  });
}

Frame AuthResultMsg::to_frame() const {
  WireWriter w;
  w.u8(accepted ? 1 : 0);
  put_text(w, reason);
  return frame(MessageType::kAuthResult, 0, w);
}
Result<AuthResultMsg> AuthResultMsg::from(const Frame& f) {
  return decode<AuthResultMsg>(f, MessageType::kAuthResult, [](WireReader& r) {
    AuthResultMsg m;
    m.accepted = r.u8("accepted") == 1;
    m.reason = get_text(r, "reason");
    return m;
  });
}

Frame WorkerAddressMsg::to_frame() const {
  WireWriter w;
  w.blob(address);
  return frame(MessageType::kWorkerAddress, 0, w);
}
Result<WorkerAddressMsg> WorkerAddressMsg::from(const Frame& f) {
  return decode<WorkerAddressMsg>(f, MessageType::kWorkerAddress, [](WireReader& r) {
    WorkerAddressMsg m;
    auto b = r.blob("worker address");
    if (r.ok() && b.empty()) r.set_error("empty worker address");
    m.address.assign(b.begin(), b.end());
    return m;
  });
}

Frame RegionsMsg::to_frame() const {
  WireWriter w;
  w.u32(static_cast<std::uint32_t>(regions.size()));
  for (const auto& g : regions) {
    w.u32(g.id);
    w.u64(g.base);
    w.u64(g.length);
    w.blob(g.rkey);
  }
  return frame(MessageType::kRegions, 0, w);
}
Result<RegionsMsg> RegionsMsg::from(const Frame& f) {
  return decode<RegionsMsg>(f, MessageType::kRegions, [](WireReader& r) {
    RegionsMsg m;
    std::uint32_t n = r.u32("region count");
    if (n > kMaxRegions) r.set_error(std::to_string(n) + " regions, at most " + std::to_string(kMaxRegions));
    for (std::uint32_t i = 0; r.ok() && i < n; ++i) {
      RegionInfo g;
      g.id = r.u32("region id");
      g.base = r.u64("region base");
      g.length = r.u64("region length");
      auto k = r.blob("rkey");
      g.rkey.assign(k.begin(), k.end());
      m.regions.push_back(std::move(g));
    }
    return m;
  });
}

Frame PageListMsg::to_frame() const {
  WireWriter w;
  w.data().reserve(17 + pages.size() * 20);
  w.u32(seq);
  w.u32(region);
  w.u8(flags);
  w.u32(static_cast<std::uint32_t>(pages.size()));
  for (const auto& p : pages) {
    w.u64(p.page);
    w.u64(p.offset);
  }
  if (flags & kHasChecksums)
    for (std::size_t i = 0; i < pages.size(); ++i) w.u32(i < crcs.size() ? crcs[i] : 0);
  return frame(MessageType::kPageList, epoch, w);
}
Result<PageListMsg> PageListMsg::from(const Frame& f) {
  return decode<PageListMsg>(f, MessageType::kPageList, [&f](WireReader& r) {
    PageListMsg m;
    m.epoch = f.epoch;
    m.seq = r.u32("seq");
    m.region = r.u32("region");
    m.flags = r.u8("flags");
    std::uint32_t n = r.u32("page count");
    std::size_t per_page = (m.flags & kHasChecksums) ? 20 : 16;
    if (r.ok() && static_cast<std::uint64_t>(n) * per_page != r.remaining())
      r.set_error("page count " + std::to_string(n) + " needs " + std::to_string(n * per_page) +
                  " bytes, payload has " + std::to_string(r.remaining()));
    if (!r.ok()) return m;
    if (m.flags & ~(kNotifyWhenPulled | kHasChecksums | kZeroPages))
      r.set_error("unknown flags " + std::to_string(m.flags));
    else if ((m.flags & kZeroPages) && (m.flags & kHasChecksums))
      r.set_error("a list of zero pages carries no checksums");
    m.pages.resize(n);
    for (auto& p : m.pages) {
      p.page = r.u64("page");
      p.offset = r.u64("offset");
    }
    if (m.flags & kHasChecksums) {
      m.crcs.resize(n);
      for (auto& c : m.crcs) c = r.u32("crc");
    }
    return m;
  });
}

Frame PagesPulledMsg::to_frame() const {
  WireWriter w;
  w.u32(seq);
  w.u32(count);
  return frame(MessageType::kPagesPulled, epoch, w);
}
Result<PagesPulledMsg> PagesPulledMsg::from(const Frame& f) {
  return decode<PagesPulledMsg>(f, MessageType::kPagesPulled, [&f](WireReader& r) {
    PagesPulledMsg m;
    m.epoch = f.epoch;
    m.seq = r.u32("seq");
    m.count = r.u32("count");
    return m;
  });
}

Frame BeginMsg::to_frame() const {
  WireWriter w;
  return frame(MessageType::kBegin, epoch, w);
}
Result<BeginMsg> BeginMsg::from(const Frame& f) {
  return decode<BeginMsg>(f, MessageType::kBegin, [&f](WireReader&) { return BeginMsg{f.epoch}; });
}

Frame StateMsg::to_frame() const {
  WireWriter w;
  w.blob(blob);
  return frame(MessageType::kState, epoch, w);
}
Result<StateMsg> StateMsg::from(const Frame& f) {
  return decode<StateMsg>(f, MessageType::kState, [&f](WireReader& r) {
    StateMsg m;
    m.epoch = f.epoch;
    auto b = r.blob("state");
    m.blob.assign(b.begin(), b.end());
    return m;
  });
}

Frame EndMsg::to_frame() const {
  WireWriter w;
  w.u64(distinct_pages);
  w.u32(page_lists);
  w.u32(state_length);
  w.u32(state_crc);
  return frame(MessageType::kEnd, epoch, w);
}
Result<EndMsg> EndMsg::from(const Frame& f) {
  return decode<EndMsg>(f, MessageType::kEnd, [&f](WireReader& r) {
    EndMsg m;
    m.epoch = f.epoch;
    m.distinct_pages = r.u64("distinct pages");
    m.page_lists = r.u32("page lists");
    m.state_length = r.u32("state length");
    m.state_crc = r.u32("state crc");
    return m;
  });
}

Frame AckMsg::to_frame() const {
  WireWriter w;
  return frame(MessageType::kAck, epoch, w);
}
Result<AckMsg> AckMsg::from(const Frame& f) {
  return decode<AckMsg>(f, MessageType::kAck, [&f](WireReader&) { return AckMsg{f.epoch}; });
}

Frame NackMsg::to_frame() const {
  WireWriter w;
  put_text(w, reason);
  return frame(MessageType::kNack, epoch, w);
}
Result<NackMsg> NackMsg::from(const Frame& f) {
  return decode<NackMsg>(f, MessageType::kNack, [&f](WireReader& r) {
    return NackMsg{f.epoch, get_text(r, "reason")};
  });
}

Frame HeartbeatMsg::to_frame() const {
  WireWriter w;
  w.u64(seq);
  w.u64(committed_epoch);
  return frame(MessageType::kHeartbeat, 0, w);
}
Result<HeartbeatMsg> HeartbeatMsg::from(const Frame& f) {
  return decode<HeartbeatMsg>(f, MessageType::kHeartbeat, [](WireReader& r) {
    HeartbeatMsg m;
    m.seq = r.u64("seq");
    m.committed_epoch = r.u64("committed epoch");
    return m;
  });
}

Frame ErrorMsg::to_frame() const {
  WireWriter w;
  put_text(w, reason);
  return frame(MessageType::kError, 0, w);
}
Result<ErrorMsg> ErrorMsg::from(const Frame& f) {
  return decode<ErrorMsg>(f, MessageType::kError, [](WireReader& r) { return ErrorMsg{get_text(r, "reason")}; });
}

Frame StandDownMsg::to_frame() const {
  WireWriter w;
  put_text(w, reason);
  return frame(MessageType::kStandDown, 0, w);
}
Result<StandDownMsg> StandDownMsg::from(const Frame& f) {
  return decode<StandDownMsg>(f, MessageType::kStandDown,
                              [](WireReader& r) { return StandDownMsg{get_text(r, "reason")}; });
}

Frame ByeMsg::to_frame() const {
  WireWriter w;
  return frame(MessageType::kBye, 0, w);
}
Result<ByeMsg> ByeMsg::from(const Frame& f) {
  return decode<ByeMsg>(f, MessageType::kBye, [](WireReader&) { return ByeMsg{}; });
}

}  // namespace vmha
