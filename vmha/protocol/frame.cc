#include "vmha/protocol/frame.h"

#include <cstdio>

#include "vmha/protocol/wire_io.h"
#include "vmha/protocol/crc32c.h"

namespace vmha {
namespace {

std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

}  // namespace

std::string message_type_name(std::uint16_t type) {
  switch (static_cast<MessageType>(type)) {
    case MessageType::kHello:
      return "Hello";
    case MessageType::kChallenge:
      return "Challenge";
    case MessageType::kResponse:
      return "Response";
    case MessageType::kAuthResult:
      return "AuthResult";
    case MessageType::kRegions:
      return "Regions";
    case MessageType::kWorkerAddress:
      return "WorkerAddress";
    case MessageType::kBegin:
      return "Begin";
    case MessageType::kPageList:
      return "PageList";
    case MessageType::kPagesPulled:
      return "PagesPulled";
    case MessageType::kState:
      return "State";
    case MessageType::kEnd:
      return "End";
    case MessageType::kAck:
      return "Ack";
    case MessageType::kNack:
      return "Nack";
    case MessageType::kHeartbeat:
      return "Heartbeat";
    case MessageType::kError:
      return "Error";
    case MessageType::kBye:
      return "Bye";
    case MessageType::kStandDown:
      return "StandDown";
  }
  return "type " + std::to_string(type);
}

bool is_known_message_type(std::uint16_t type) { return message_type_name(type).rfind("type ", 0) != 0; }

std::vector<std::uint8_t> encode_frame(MessageType type, std::uint64_t epoch, std::span<const std::uint8_t> payload) {
  WireWriter w;
  w.data().reserve(kFrameHeaderSize + payload.size());
  w.u32(kFrameMagic);
  w.u16(kProtocolVersion);
  w.u16(static_cast<std::uint16_t>(type));
  w.u64(epoch);
  w.u32(static_cast<std::uint32_t>(payload.size()));
  w.u32(crc32c(payload));
  w.u32(0);
  w.u32(crc32c(0, w.data().data(), w.data().size()));
  w.bytes(payload);
  return w.take();
}

Result<FrameHeader> decode_frame_header(std::span<const std::uint8_t> header, std::uint32_t max_payload) {
  if (header.size() < kFrameHeaderSize)
    return Status::error("truncated frame header: " + std::to_string(header.size()) + " of " +
                         std::to_string(kFrameHeaderSize) + " bytes");
  WireReader r(header.first(kFrameHeaderSize));
  std::uint32_t magic = r.u32("magic");
  std::uint16_t version = r.u16("version");
  std::uint16_t type = r.u16("type");
  FrameHeader h;
  h.epoch = r.u64("epoch");
  h.payload_length = r.u32("payload length");
  h.payload_crc = r.u32("payload crc");
  (void)r.u32("reserved");
  std::uint32_t stored = r.u32("header crc");
  if (magic != kFrameMagic)
    return Status::error("bad frame magic " + hex32(magic) + " (expected " + hex32(kFrameMagic) +
                         "): the peer does not speak the vmha replication protocol");
  std::uint32_t computed = crc32c(0, header.data(), kFrameHeaderSize - 4);
  if (stored != computed)
    return Status::error("frame header checksum mismatch (stored " + hex32(stored) + ", computed " + hex32(computed) +
                         "): corrupted frame");
  if (version != kProtocolVersion)
    return Status::error("unsupported protocol version " + std::to_string(version) + " (this build speaks " +
                         std::to_string(kProtocolVersion) + ")");
  if (!is_known_message_type(type)) return Status::error("unknown message type " + std::to_string(type));
  h.type = static_cast<MessageType>(type);
  if (h.payload_length > max_payload)
    return Status::error(message_type_name(type) + " frame announces " + std::to_string(h.payload_length) +
                         " payload bytes, limit is " + std::to_string(max_payload));
  return h;
}

Status verify_frame_payload(const FrameHeader& h, std::span<const std::uint8_t> payload) {
  std::string what =
      message_type_name(static_cast<std::uint16_t>(h.type)) + " frame of epoch " + std::to_string(h.epoch);
  if (payload.size() != h.payload_length)
    return Status::error("truncated " + what + ": header announces " + std::to_string(h.payload_length) +
                         " payload bytes, " + std::to_string(payload.size()) + " present");
  std::uint32_t computed = crc32c(payload);
  if (computed != h.payload_crc)
    return Status::error("payload checksum mismatch in " + what + " (stored " + hex32(h.payload_crc) + ", computed " +
                         hex32(computed) + "): corrupted frame");
  return {};
}

Result<Frame> decode_frame(std::span<const std::uint8_t> bytes, std::uint32_t max_payload) {
  auto header = decode_frame_header(bytes, max_payload);
  if (!header.ok()) return header.status();
  auto payload = bytes.subspan(kFrameHeaderSize);
  if (payload.size() > header.value().payload_length)
    return Status::error(std::to_string(payload.size() - header.value().payload_length) + " bytes after the end of a " +
                         message_type_name(static_cast<std::uint16_t>(header.value().type)) + " frame");
  Status s = verify_frame_payload(header.value(), payload);
  if (!s.ok()) return s;
  return Frame{header.value().type, header.value().epoch, {payload.begin(), payload.end()}};
}

}  // namespace vmha
