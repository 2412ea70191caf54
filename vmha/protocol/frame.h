// Wire framing of replication messages. Every message is one frame:
//
//   offset size field
//   0      4    magic "VMHA" (0x41484D56 little-endian)
//   4      2    protocol version (kProtocolVersion)
//   6      2    message type (MessageType)
//   8      8    epoch the message belongs to (0 outside checkpoints)
//   16     4    payload length in bytes
//   20     4    CRC32C of the payload
//   24     4    reserved, zero
//   28     4    CRC32C of bytes 0..27 (checked before the length is trusted)
//   32     ...  payload
//
// All integers are little-endian. A corrupted, truncated or oversized frame is
// rejected with an error that says which check failed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

inline constexpr std::uint32_t kFrameMagic = 0x41484D56;  // "VMHA"
inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kFrameHeaderSize = 32;
// Largest payload accepted from an authenticated peer (page lists, state blobs).
inline constexpr std::uint32_t kMaxFramePayload = 64u << 20;
// Largest payload accepted before authentication completes.
inline constexpr std::uint32_t kMaxUnauthenticatedPayload = 4096;

enum class MessageType : std::uint16_t {
  kHello = 1,          // primary -> backup: nonce, opens authentication
  kChallenge = 2,      // backup -> primary: nonce + backup's proof
  kResponse = 3,       // primary -> backup: primary's proof
  kAuthResult = 4,     // backup -> primary: accepted or refused (reason)
  kRegions = 5,        // primary -> backup: registered memory regions + packed rkeys
  kWorkerAddress = 6,  // both ways, after authentication: UCX worker address
  kBegin = 10,         // primary -> backup: a checkpoint starts
  kPageList = 11,      // primary -> backup: pages to pull for this checkpoint
  kPagesPulled = 12,   // backup -> primary: a page list was pulled (when asked)
  kState = 13,         // primary -> backup: vCPU + VMM state blob
  kEnd = 14,           // primary -> backup: checkpoint complete, what to verify
  kAck = 15,           // backup -> primary: checkpoint committed
  kNack = 16,          // backup -> primary: checkpoint refused (reason)
  kHeartbeat = 20,     // either way: liveness
  kError = 21,         // either way: fatal protocol error (reason), connection ends
  kBye = 22,           // either way: orderly end
  kStandDown = 23,     // primary -> backup: it went on unprotected (reason); never take over
};

// Name for messages ("PageList"); "type N" for unknown values.
std::string message_type_name(std::uint16_t type);
bool is_known_message_type(std::uint16_t type);

struct FrameHeader {
  MessageType type{};
  std::uint64_t epoch = 0;
  std::uint32_t payload_length = 0;
  std::uint32_t payload_crc = 0;
};

struct Frame {
  MessageType type{};
  std::uint64_t epoch = 0;
  std::vector<std::uint8_t> payload;
};

std::vector<std::uint8_t> encode_frame(MessageType type, std::uint64_t epoch, std::span<const std::uint8_t> payload);
inline std::vector<std::uint8_t> encode_frame(const Frame& f) { return encode_frame(f.type, f.epoch, f.payload); }

// Checks magic, header checksum, version, type and length <= max_payload.
Result<FrameHeader> decode_frame_header(std::span<const std::uint8_t> header,
                                        std::uint32_t max_payload = kMaxFramePayload);
// Checks the payload's length and checksum against a decoded header.
Status verify_frame_payload(const FrameHeader& header, std::span<const std::uint8_t> payload);
// Decodes one whole frame (header + payload, nothing after it).
Result<Frame> decode_frame(std::span<const std::uint8_t> bytes, std::uint32_t max_payload = kMaxFramePayload);

}  // namespace vmha
