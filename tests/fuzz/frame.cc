// Fuzz target: protocol frames (vmha/protocol/frame.h) and every message's
// payload decoder (messages.h). The input is decoded as a whole frame; it is
// also handed, as a bare payload, to every message's from(), so mutations reach
// the payload decoders without having to forge the frame's CRCs. Errors are
// Status values; a crash, or a message that does not survive its own
// to_frame()/from() round trip, is a finding.
#include <cstdlib>
#include <vector>

#include "tests/fuzz/fuzz_target.h"
#include "vmha/protocol/frame.h"
#include "vmha/protocol/messages.h"

namespace {

// Decodes `f` as Msg; what decodes must decode again after re-encoding.
template <class Msg>
void decode_as(const vmha::Frame& f) {
  auto m = Msg::from(f);
  if (!m.ok()) return;
  if (!Msg::from(m.value().to_frame()).ok()) std::abort();
}

// The decoder of the frame's own type (one of another type must refuse it).
void decode_by_type(const vmha::Frame& f) {
  using namespace vmha;
  switch (f.type) {
    case MessageType::kHello:
      decode_as<HelloMsg>(f);
      break;
    case MessageType::kChallenge:
      decode_as<ChallengeMsg>(f);
      break;
    case MessageType::kResponse:
      decode_as<ResponseMsg>(f);
      break;
    case MessageType::kAuthResult:
      decode_as<AuthResultMsg>(f);
      break;
    case MessageType::kRegions:
      decode_as<RegionsMsg>(f);
      break;
    case MessageType::kWorkerAddress:
      decode_as<WorkerAddressMsg>(f);
      break;
    case MessageType::kBegin:
      decode_as<BeginMsg>(f);
      break;
    case MessageType::kPageList:
      decode_as<PageListMsg>(f);
      break;
    case MessageType::kPagesPulled:
      decode_as<PagesPulledMsg>(f);
      break;
    case MessageType::kState:
      decode_as<StateMsg>(f);
      break;
    case MessageType::kEnd:
      decode_as<EndMsg>(f);
      break;
    case MessageType::kAck:
      decode_as<AckMsg>(f);
      break;
    case MessageType::kNack:
      decode_as<NackMsg>(f);
      break;
    case MessageType::kHeartbeat:
      decode_as<HeartbeatMsg>(f);
      break;
    case MessageType::kError:
      decode_as<ErrorMsg>(f);
      break;
    case MessageType::kBye:
      decode_as<ByeMsg>(f);
      break;
    case MessageType::kStandDown:
      decode_as<StandDownMsg>(f);
      break;
  }
  if (f.type != MessageType::kBye && ByeMsg::from(f).ok()) std::abort();
}

constexpr vmha::MessageType kTypes[] = {
    vmha::MessageType::kHello,         vmha::MessageType::kChallenge, vmha::MessageType::kResponse,
    vmha::MessageType::kAuthResult,    vmha::MessageType::kRegions,   vmha::MessageType::kBegin,
    vmha::MessageType::kWorkerAddress, vmha::MessageType::kPageList,  vmha::MessageType::kPagesPulled,
    vmha::MessageType::kState,         vmha::MessageType::kEnd,       vmha::MessageType::kAck,
    vmha::MessageType::kNack,          vmha::MessageType::kHeartbeat, vmha::MessageType::kError,
    vmha::MessageType::kBye,           vmha::MessageType::kStandDown,
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::uint8_t> bytes(data, size);
  // A whole frame, with both payload limits the transport uses.
  (void)vmha::decode_frame(bytes, vmha::kMaxUnauthenticatedPayload);
  auto f = vmha::decode_frame(bytes);
  if (f.ok()) {
    decode_by_type(f.value());
    (void)vmha::message_type_name(static_cast<std::uint16_t>(f.value().type));
    if (!vmha::decode_frame(vmha::encode_frame(f.value())).ok()) std::abort();
  }
  if (size >= vmha::kFrameHeaderSize) {
    auto h = vmha::decode_frame_header(bytes.first(vmha::kFrameHeaderSize));
    if (h.ok()) (void)vmha::verify_frame_payload(h.value(), bytes.subspan(vmha::kFrameHeaderSize));
  }
  // The same bytes as the payload of each message type.
  for (vmha::MessageType t : kTypes) decode_by_type(vmha::Frame{t, 1, std::vector<std::uint8_t>(data, data + size)});
  return 0;
}
