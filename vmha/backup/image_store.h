// The backup's copy of the guest: the last committed image (memory + state
// blob) and, separately, the checkpoint being received.
//
// One full image and a slot area. Pages of an incoming checkpoint go to the
// next free slots, in the order they are first named, so a run of adjacent new
// pages is one contiguous destination for a one-sided read; a page named again
// in the same checkpoint reuses its slot. commit() verifies the checkpoint and,
// under a lock, makes it the committed one: that is the commit point, and a
// checkpoint that is incomplete or fails verification is never visible. Its
// slots are copied into the image before anyone reads it (read_committed()) or
// the next checkpoint begins, so the acknowledgement does not wait for the copy.
// A page no committed checkpoint gave content (the image holds zeros there)
// is read straight into the image instead: nothing committed can be
// overwritten, and a checkpoint that is discarded zeroes those pages again.
// Memory: the image plus the largest checkpoint's pages that had content
// before (slots past 64 MiB are given back after each one), not two images:
// an 8 GiB guest's first full copy needs no slots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
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
  // Owns its image and slot area (anonymous memory, populated on first write).
  ImageStore(std::size_t page_size, std::uint64_t page_count);
  // Uses caller memory (each page_size * page_count bytes, outliving the
  // store; the image zero-filled). Register the slots with the backup's
  // transport: reads into registered memory are several times faster
  // (vmha-pull-bench --registered-dest).
  ImageStore(std::size_t page_size, std::uint64_t page_count, std::span<std::uint8_t> image,
             std::span<std::uint8_t> slots);
  ~ImageStore();
  ImageStore(const ImageStore&) = delete;
  ImageStore& operator=(const ImageStore&) = delete;

  std::size_t page_size() const { return page_size_; }
  // Where checkpoints are read into: register both with the transport.
  std::span<std::uint8_t> slot_area() const { return {slots_, bytes_}; }
  std::span<std::uint8_t> image_area() const { return {image_, bytes_}; }
  std::uint64_t page_count() const { return page_count_; }

  // --- staging (one checkpoint at a time, one thread) ---
  // Starts checkpoint `epoch` (> committed epoch); discards an unfinished one.
  Status begin(std::uint64_t epoch);
  std::uint64_t staging_epoch() const { return staging_epoch_; }
  // Where page `page`'s content goes (its slot; what it holds before the
  // content is written is unspecified); marks it part of this checkpoint.
  // Pages first named one after the other get adjacent slots.
  Result<std::uint8_t*> stage_page(std::uint64_t page);
  // Page `page` of this checkpoint is all zeros (nothing to read).
  Status stage_zero(std::uint64_t page);
  std::uint64_t staged_pages() const { return staged_list_.size(); }
  Status stage_state(std::vector<std::uint8_t> blob);
  // Verifies the staged checkpoint against `expected` and makes it the image.
  // On a mismatch the checkpoint is discarded and the image stays as it was.
  Status commit(const CheckpointSummary& expected);
  // Discards the staged checkpoint (why: for the log); the image is untouched.
  void abort(const std::string& why);
  const std::string& last_abort_reason() const { return last_abort_; }

  // --- committed image ---
  std::uint64_t committed_epoch() const;  // any thread
  // Runs `fn` on a consistent view; no commit happens while it runs.
  // Copies the last commit's slots into the image first. On the receiving
  // thread, or once it stopped: pages of a checkpoint being received that
  // were read into the image move to slots first (that checkpoint goes on).
  void read_committed(const std::function<void(const CommittedImage&)>& fn);

 private:
  std::uint8_t* page_ptr(std::uint8_t* base, std::uint64_t index) const { return base + index * page_size_; }
  // Under committed_mutex_: the committed checkpoint's slots into the image.
  void apply_committed() const;
  Status mark_staged(std::uint64_t page);
  void end_staging();
  void zero_image_pages(const std::vector<std::uint64_t>& pages);
  std::uint32_t next_slot();  // the next free slot of this checkpoint

  std::size_t page_size_;
  std::uint64_t page_count_;
  std::size_t bytes_;
  std::uint8_t* image_ = nullptr;
  std::uint8_t* slots_ = nullptr;
  bool owns_memory_ = true;
  std::vector<std::uint8_t> committed_state_;
  std::uint64_t committed_epoch_ = 0;
  mutable std::mutex committed_mutex_;
  // The committed checkpoint's pages not yet in the image (slot_of_ says where).
  mutable std::vector<std::uint64_t> unapplied_;

  std::uint64_t staging_epoch_ = 0;         // 0: none
  std::vector<std::uint64_t> staged_bits_;  // pages staged in this checkpoint
  std::vector<std::uint64_t> staged_list_;  // distinct pages, in the order first named
  std::vector<std::uint32_t> slot_of_;      // for staged pages: their slot (kInImage: read into the image)
  std::vector<std::uint64_t> content_bits_;  // pages a committed checkpoint gave content
  std::vector<std::uint64_t> in_image_;      // this checkpoint's pages read straight into the image
  mutable std::vector<std::uint64_t> zero_bits_;  // staged pages that are zero (last said)
  std::uint32_t slots_used_ = 0;
  std::size_t slot_bytes_touched_ = 0;      // high-water mark of the slot area
  std::vector<std::uint8_t> staging_state_;
  bool have_state_ = false;
  std::string last_abort_;
};

}  // namespace vmha
