// Backup side of the checkpoint protocol: reads messages from the primary,
// pulls the announced pages into the image store's slots, verifies and
// commits each checkpoint, and acknowledges it.
//
//   Begin(e)                  store.begin(e)
//   PageList(e, pages)        one-sided reads into staging (adjacent pages
//                             coalesced), optional CRC check, PagesPulled reply
//   State(e, blob)            staged
//   End(e, counts, state crc) verify + atomic commit, then Ack(e) (or Nack)
//   Heartbeat                 echoed with the committed epoch
//   StandDown(reason)         the primary went on without this backup
//
// Any error (corrupted or truncated frame, failed read, bad counts, lost
// connection) discards the staged checkpoint; the committed image is untouched.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "vmha/backup/image_store.h"
#include "vmha/backup/lease.h"
#include "vmha/common/status.h"
#include "vmha/transport/transport.h"

namespace vmha {

struct ReceiverStats {
  std::uint64_t page_lists = 0;
  std::uint64_t pages_pulled = 0;
  std::uint64_t zero_pages = 0;  // named as zero: nothing read
  std::uint64_t bytes_pulled = 0;
  std::uint64_t reads = 0;  // one-sided reads issued (after coalescing)
  std::uint64_t commits = 0;
  std::uint64_t heartbeats = 0;
};

class CheckpointReceiver {
 public:
  enum class Event { kIdle, kProgress, kCommitted, kBye, kStandDown };
  struct Step {
    Event event = Event::kIdle;
    std::uint64_t epoch = 0;  // kCommitted: the epoch now committed
    std::string reason;       // kStandDown: why the primary gave up on this backup
  };

  CheckpointReceiver(Channel& channel, ImageStore& store, Lease& lease);

  // Handles at most one message, waiting up to `timeout` (kIdle if none came).
  // An error means the channel must be dropped. The lease hears the primary
  // when the message arrives and again once it is handled: time this side
  // spends pulling pages is not the primary's silence.
  Result<Step> step(std::chrono::milliseconds timeout);
  const ReceiverStats& stats() const { return stats_; }

 private:
  Result<Step> handle(const Frame& f);
  Status on_page_list(const Frame& f);
  Result<Step> on_end(const Frame& f);
  Status protocol_error(Status s);

  Channel& channel_;
  ImageStore& store_;
  Lease& lease_;
  ReceiverStats stats_;
  std::uint32_t lists_this_epoch_ = 0;
};

}  // namespace vmha
