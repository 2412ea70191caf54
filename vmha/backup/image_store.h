// The backup's copy of the guest: the last committed image (memory + state
// blob) and, separately, the checkpoint being received.
//
// Two full images: `committed` and `staging`. Pages of an incoming checkpoint
// are written into staging at their own offset (page * page_size), so a run of
// adjacent pages is one contiguous destination for a one-sided read. commit()
// verifies the checkpoint and swaps the two under a lock: the swap is the commit
// point, and a checkpoint that is incomplete or fails verification is never
// visible. After a swap (or an abort) staging differs from committed exactly on
// that checkpoint's pages; begin() copies those back before the next one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "vmha/common/status.h"

namespace vmha {

// What the primary says the checkpoint holds (from its End message).
struct CheckpointSummary {
  std::uint64_t epoch = 0;
  std::uint64_t distinct_pages = 0;
  std::uint32_t state_length = 0;
  std::uint32_t state_crc = 0;
};

struct CommittedImage {
  std::uint64_t epoch = 0;  // 0: nothing committed yet (all-zero memory, empty state)
  std::span<const std::uint8_t> memory;
  std::span<const std::uint8_t> state;
};

class ImageStore {
 public:
  // Owns its two images (anonymous memory, populated on first write).
  ImageStore(std::size_t page_size, std::uint64_t page_count);
  // Uses caller memory for the two images (each page_size * page_count bytes,
  // zero-filled, outliving the store). Pass memory from the backup transport's
  // allocate_region(): reads into registered memory are several times faster
  // (vmha-pull-bench --registered-dest).
  ImageStore(std::size_t page_size, std::uint64_t page_count, std::span<std::uint8_t> image_a,
             std::span<std::uint8_t> image_b);
  ~ImageStore();
  ImageStore(const ImageStore&) = delete;
  ImageStore& operator=(const ImageStore&) = delete;

  std::size_t page_size() const { return page_size_; }
  std::uint64_t page_count() const { return page_count_; }

  // --- staging (one checkpoint at a time, one thread) ---
  // Starts checkpoint `epoch` (> committed epoch); discards an unfinished one.
  Status begin(std::uint64_t epoch);
  std::uint64_t staging_epoch() const { return staging_epoch_; }
  // Where page `page`'s content goes; marks it part of this checkpoint. Pages
  // are contiguous: stage_page(p + 1) == stage_page(p) + page_size.
  Result<std::uint8_t*> stage_page(std::uint64_t page);
  std::uint64_t staged_pages() const { return staged_list_.size(); }
  Status stage_state(std::vector<std::uint8_t> blob);
  // Verifies the staged checkpoint against `expected` and makes it the image.
  // On a mismatch the checkpoint is discarded and the image stays as it was.
  Status commit(const CheckpointSummary& expected);
  // Discards the staged checkpoint (why: for the log); the image is untouched.
  void abort(const std::string& why);
  const std::string& last_abort_reason() const { return last_abort_; }

  // --- committed image (any thread) ---
  std::uint64_t committed_epoch() const;
  // Runs `fn` on a consistent view; no commit happens while it runs.
  void read_committed(const std::function<void(const CommittedImage&)>& fn) const;

 private:
  std::uint8_t* page_ptr(std::uint8_t* image, std::uint64_t page) const { return image + page * page_size_; }
  void resync_staging();
  void end_staging();

  std::size_t page_size_;
  std::uint64_t page_count_;
  std::size_t bytes_;
  std::uint8_t* committed_ = nullptr;
  std::uint8_t* staging_ = nullptr;
  bool owns_images_ = true;
  std::vector<std::uint8_t> committed_state_;
  std::uint64_t committed_epoch_ = 0;
  mutable std::shared_mutex committed_mutex_;

  std::uint64_t staging_epoch_ = 0;         // 0: none
  std::vector<std::uint64_t> staged_bits_;  // pages staged in this checkpoint
  std::vector<std::uint64_t> staged_list_;
  std::vector<std::uint64_t> diverged_;  // pages where staging != committed
  std::vector<std::uint8_t> staging_state_;
  bool have_state_ = false;
  std::string last_abort_;
};

}  // namespace vmha
