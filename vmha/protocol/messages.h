// Payloads of the replication messages (see frame.h for the frame around them and
// vmha(1) for the epoch protocol). Each message converts to a Frame and back;
// decoding checks the frame type, every length, and that nothing trails.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/protocol/frame.h"

namespace vmha {

inline constexpr std::size_t kNonceSize = 32;
using Nonce = std::array<std::uint8_t, kNonceSize>;

struct HelloMsg {      // primary -> backup
  std::string method;  // authentication method, e.g. "hmac-sha256"
  Nonce nonce{};
  Frame to_frame() const;
  static Result<HelloMsg> from(const Frame& f);
};

struct ChallengeMsg {  // backup -> primary
  Nonce nonce{};
  std::vector<std::uint8_t> proof;  // backup proves it holds the secret
  Frame to_frame() const;
  static Result<ChallengeMsg> from(const Frame& f);
};

struct ResponseMsg {  // primary -> backup
  std::vector<std::uint8_t> proof;
  Frame to_frame() const;
  static Result<ResponseMsg> from(const Frame& f);
};

struct AuthResultMsg {  // backup -> primary
  bool accepted = false;
  std::string reason;
  Frame to_frame() const;
  static Result<AuthResultMsg> from(const Frame& f);
};

// Sent by each side over the authenticated socket: the peer creates its UCX
// endpoint from it (no UCX listener is exposed).
struct WorkerAddressMsg {
  std::vector<std::uint8_t> address;  // ucp_worker_get_address() bytes
  Frame to_frame() const;
  static Result<WorkerAddressMsg> from(const Frame& f);
};

struct RegionInfo {
  std::uint32_t id = 0;
  std::uint64_t base = 0;          // remote virtual address of byte 0
  std::uint64_t length = 0;        // bytes
  std::vector<std::uint8_t> rkey;  // transport-specific packed remote key
};

struct RegionsMsg {  // primary -> backup, once after authentication
  std::vector<RegionInfo> regions;
  Frame to_frame() const;
  static Result<RegionsMsg> from(const Frame& f);
};

struct PageRef {
  std::uint64_t page = 0;    // page number in the guest image
  std::uint64_t offset = 0;  // byte offset of its content in the source region
};

struct PageListMsg {                                    // primary -> backup: pull these pages for checkpoint `epoch`
  static constexpr std::uint8_t kNotifyWhenPulled = 1;  // reply PagesPulled
  static constexpr std::uint8_t kHasChecksums = 2;      // crcs[i] is CRC32C of page i
  static constexpr std::uint8_t kZeroPages = 4;         // every page is zero: nothing to read (offsets 0)
  std::uint64_t epoch = 0;
  std::uint32_t seq = 0;
  std::uint32_t region = 0;
  std::uint8_t flags = 0;
  std::vector<PageRef> pages;
  std::vector<std::uint32_t> crcs;  // empty unless kHasChecksums
  Frame to_frame() const;
  static Result<PageListMsg> from(const Frame& f);
};

struct PagesPulledMsg {  // backup -> primary
  std::uint64_t epoch = 0;
  std::uint32_t seq = 0;
  std::uint32_t count = 0;
  Frame to_frame() const;
  static Result<PagesPulledMsg> from(const Frame& f);
};

struct BeginMsg {
  std::uint64_t epoch = 0;
  Frame to_frame() const;
  static Result<BeginMsg> from(const Frame& f);
};

struct StateMsg {  // vCPU + VMM state, opaque to replication
  std::uint64_t epoch = 0;
  std::vector<std::uint8_t> blob;
  Frame to_frame() const;
  static Result<StateMsg> from(const Frame& f);
};

struct EndMsg {  // what the backup verifies before it commits
  std::uint64_t epoch = 0;
  std::uint64_t distinct_pages = 0;  // pages in this checkpoint, each counted once
  std::uint32_t page_lists = 0;      // PageList messages sent in this checkpoint
  std::uint32_t state_length = 0;
  std::uint32_t state_crc = 0;
  Frame to_frame() const;
  static Result<EndMsg> from(const Frame& f);
};

struct AckMsg {
  std::uint64_t epoch = 0;
  Frame to_frame() const;
  static Result<AckMsg> from(const Frame& f);
};

struct NackMsg {
  std::uint64_t epoch = 0;
  std::string reason;
  Frame to_frame() const;
  static Result<NackMsg> from(const Frame& f);
};

struct HeartbeatMsg {
  std::uint64_t seq = 0;
  std::uint64_t committed_epoch = 0;  // sender's view (backup: last committed)
  Frame to_frame() const;
  static Result<HeartbeatMsg> from(const Frame& f);
};

struct ErrorMsg {
  std::string reason;
  Frame to_frame() const;
  static Result<ErrorMsg> from(const Frame& f);
};

// The primary gave up on this backup and runs on unprotected: the backup's
// image falls behind the released output, so it must never resume it.
struct StandDownMsg {
  std::string reason;
  Frame to_frame() const;
  static Result<StandDownMsg> from(const Frame& f);
};

struct ByeMsg {
  Frame to_frame() const;
  static Result<ByeMsg> from(const Frame& f);
};

}  // namespace vmha
