// Primary side of the checkpoint protocol, for the epoch manager:
//
//   begin(e)                         a checkpoint starts
//   send_pages(region, pages)        (prefetch thread, while the guest runs)
//                                    the backup pulls these pages one-sided
//   send_zero_pages(pages)           pages that are all zeros: nothing to pull
//   -- guest paused --
//   send_pages(..., crcs, notify)    residual pages (dirty since their last pull)
//   wait_pulled(seq)                 only if they are read from live guest memory
//   send_state(blob)                 vCPU + VMM state
//   end()                            counts for the backup to verify
//   -- guest resumed --
//   wait_ack(e)                      then release that epoch's output
//
// While waiting for the backup, heartbeats go out every set_heartbeat_every,
// so the backup never counts a primary that waits for it as silent.
//
// Thread-safe: the prefetch thread and the epoch thread may call concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/protocol/messages.h"
#include "vmha/transport/transport.h"

namespace vmha {

class CheckpointSender {
 public:
  // Page lists longer than this are split into several messages.
  static constexpr std::size_t kMaxPagesPerList = 65536;

  CheckpointSender(Channel& channel, std::uint64_t page_count);

  Status begin(std::uint64_t epoch);
  // Asks the backup to read `pages` from `region`. With `crcs` (one per page),
  // the backup checks each page after reading it. With `notify`, the backup
  // answers PagesPulled; `seq` receives the number to wait for.
  Status send_pages(std::uint32_t region, std::span<const PageRef> pages, std::span<const std::uint32_t> crcs = {},
                    bool notify = false, std::uint32_t* seq = nullptr);
  // Tells the backup these pages are all zeros (nothing to read): a fresh
  // mapping's thousands of frames cost a few bytes each.
  Status send_zero_pages(std::span<const std::uint64_t> pages);
  Status wait_pulled(std::uint32_t seq, std::chrono::milliseconds timeout);
  Status send_state(std::span<const std::uint8_t> blob);
  Status end();
  // Ok once the backup committed `epoch`; error on Nack, peer Error, loss, timeout.
  Status wait_ack(std::uint64_t epoch, std::chrono::milliseconds timeout);

  void set_heartbeat_every(std::chrono::milliseconds every) { heartbeat_every_ = every; }
  Status heartbeat();
  // Tells the backup that this primary goes on without it and waits until
  // it agrees (Bye); then confirms (a second StandDown), after which the
  // backup never takes over. Ok only then.
  Status stand_down(const std::string& reason, std::chrono::milliseconds timeout);
  // Handles replies that are already there (heartbeat echoes, acks); never blocks long.
  Status poll(std::chrono::milliseconds timeout);

  std::uint64_t epoch() const;
  std::uint64_t acked_epoch() const;
  std::uint64_t distinct_pages() const;  // in the current checkpoint
  std::uint32_t page_lists() const;      // sent in the current checkpoint
  std::chrono::steady_clock::time_point last_heard() const;

 private:
  // send_pages / send_zero_pages, the lock held; flags: PageListMsg kNotifyWhenPulled, kZeroPages.
  Status send_list(std::uint32_t region, std::span<const PageRef> pages, std::span<const std::uint32_t> crcs,
                   std::uint8_t flags, std::uint32_t* seq);
  Status pump(std::chrono::milliseconds timeout);  // receives one reply; caller holds rx_mutex_
  // Pumps until done() or the deadline, with heartbeats; caller holds rx_mutex_.
  template <typename Done>
  Status wait_until(Done done, std::chrono::milliseconds timeout, const std::string& what);
  Status send_heartbeat(std::uint64_t committed);

  Channel& channel_;
  std::uint64_t page_count_;
  mutable std::mutex mutex_;  // checkpoint bookkeeping
  std::uint64_t epoch_ = 0;
  bool open_ = false;
  bool stood_down_ = false;  // the backup answered StandDown (under rx_mutex_)
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint64_t> touched_words_;
  std::uint64_t distinct_ = 0;
  std::uint32_t lists_ = 0;
  std::uint32_t next_seq_ = 1;
  std::uint32_t state_length_ = 0;
  std::uint32_t state_crc_ = 0;
  bool have_state_ = false;

  mutable std::mutex rx_mutex_;  // replies
  std::uint64_t acked_ = 0;
  std::uint32_t pulled_seq_ = 0;
  std::uint64_t heartbeat_seq_ = 0;
  std::chrono::milliseconds heartbeat_every_{0};  // 0: none while waiting
  std::string refusal_;                           // Nack / Error text
  std::chrono::steady_clock::time_point last_heard_ = std::chrono::steady_clock::now();
};

}  // namespace vmha
