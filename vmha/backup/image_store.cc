#include "vmha/backup/image_store.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "vmha/protocol/crc32c.h"

namespace vmha {
namespace {

std::uint8_t* map_zeroed(std::size_t bytes) {
  // Anonymous, populated on first touch: an image costs only what is written.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<std::uint8_t*>(p);
}

// Slots kept populated between checkpoints; past this the area is given back
// after each one (a large first copy must not hold its size for the run).
constexpr std::size_t kKeptSlotBytes = 64u << 20;
constexpr std::uint32_t kNoSlot = UINT32_MAX;
constexpr std::uint32_t kInImage = UINT32_MAX - 1;  // read straight into the image (no committed content there)
constexpr std::size_t kZeroRunToDiscard = 16;        // shorter runs of zero pages are memset

}  // namespace

ImageStore::ImageStore(std::size_t page_size, std::uint64_t page_count)
    : page_size_(page_size), page_count_(page_count), bytes_(page_size * page_count) {
  if (page_count >= UINT32_MAX) throw std::invalid_argument("ImageStore: more than 2^32 pages");
  image_ = map_zeroed(bytes_ ? bytes_ : 1);
  slots_ = map_zeroed(bytes_ ? bytes_ : 1);
  staged_bits_.assign((page_count + 63) / 64, 0);
  zero_bits_.assign((page_count + 63) / 64, 0);
  content_bits_.assign((page_count + 63) / 64, 0);
  slot_of_.assign(page_count, kNoSlot);
}

ImageStore::ImageStore(std::size_t page_size, std::uint64_t page_count, std::span<std::uint8_t> image,
                       std::span<std::uint8_t> slots)
    : page_size_(page_size), page_count_(page_count), bytes_(page_size * page_count) {
  if (page_count >= UINT32_MAX) throw std::invalid_argument("ImageStore: more than 2^32 pages");
  if (image.size() < bytes_ || slots.size() < bytes_)
    throw std::invalid_argument("ImageStore: image or slot memory smaller than page_size * page_count");
  image_ = image.data();
  slots_ = slots.data();
  owns_memory_ = false;
  staged_bits_.assign((page_count + 63) / 64, 0);
  zero_bits_.assign((page_count + 63) / 64, 0);
  content_bits_.assign((page_count + 63) / 64, 0);
  slot_of_.assign(page_count, kNoSlot);
}

ImageStore::~ImageStore() {
  if (!owns_memory_) return;
  ::munmap(image_, bytes_ ? bytes_ : 1);
  ::munmap(slots_, bytes_ ? bytes_ : 1);
}

void ImageStore::apply_committed() const {
  // In the order first named (runs of adjacent pages stay runs); a page's
  // last staging decides: its slot, or zero.
  auto zero = [&](std::uint64_t p) { return (zero_bits_[p / 64] >> (p % 64)) & 1; };
  for (std::size_t i = 0; i < unapplied_.size();) {
    const std::uint64_t p = unapplied_[i];
    if (!zero(p)) {
      if (slot_of_[p] != kInImage)
        std::memcpy(image_ + p * page_size_, slots_ + std::size_t{slot_of_[p]} * page_size_, page_size_);
      ++i;
      continue;
    }
    std::size_t n = 1;
    while (i + n < unapplied_.size() && unapplied_[i + n] == p + n && zero(p + n)) ++n;
    // Private anonymous memory given back reads as zeros and costs nothing
    // (a guest's fresh mapping arrives as thousands of zero pages).
    if (!owns_memory_ || n < kZeroRunToDiscard ||
        ::madvise(image_ + p * page_size_, n * page_size_, MADV_DONTNEED) != 0)
      std::memset(image_ + p * page_size_, 0, n * page_size_);
    for (std::size_t k = 0; k < n; ++k) zero_bits_[(p + k) / 64] &= ~(std::uint64_t{1} << ((p + k) % 64));
    i += n;
  }
  unapplied_.clear();
}

Status ImageStore::begin(std::uint64_t epoch) {
  if (staging_epoch_ != 0) abort("superseded by checkpoint " + std::to_string(epoch));
  std::uint64_t committed = committed_epoch();
  if (epoch <= committed)
    return Status::error("checkpoint " + std::to_string(epoch) + " is not newer than the committed checkpoint " +
                         std::to_string(committed));
  {
    std::lock_guard<std::mutex> lock(committed_mutex_);
    apply_committed();  // the slots are reused from the first one
  }
  // Slots past the kept part go back to the system (MADV_DONTNEED reads back
  // as zeros on private memory; shared memory keeps its pages, harmlessly).
  if (slot_bytes_touched_ > kKeptSlotBytes) {
    (void)::madvise(slots_ + kKeptSlotBytes, slot_bytes_touched_ - kKeptSlotBytes, MADV_DONTNEED);
    slot_bytes_touched_ = kKeptSlotBytes;
  }
  staging_epoch_ = epoch;
  slots_used_ = 0;
  have_state_ = false;
  staging_state_.clear();
  return {};
}

Result<std::uint8_t*> ImageStore::stage_page(std::uint64_t page) {
  if (Status s = mark_staged(page); !s.ok()) return s;
  zero_bits_[page / 64] &= ~(std::uint64_t{1} << (page % 64));
  if (slot_of_[page] == kInImage) return page_ptr(image_, page);
  if (slot_of_[page] == kNoSlot && !((content_bits_[page / 64] >> (page % 64)) & 1)) {
    slot_of_[page] = kInImage;  // zeros there, and nothing committed to keep
    in_image_.push_back(page);
    return page_ptr(image_, page);
  }
  if (slot_of_[page] == kNoSlot) {
    slot_of_[page] = next_slot();
  }
  return page_ptr(slots_, slot_of_[page]);
}

// At most one slot per page and checkpoint: slots_used_ <= page_count_.
std::uint32_t ImageStore::next_slot() {
  slot_bytes_touched_ = std::max(slot_bytes_touched_, std::size_t{slots_used_ + 1} * page_size_);
  return slots_used_++;
}

Status ImageStore::stage_zero(std::uint64_t page) {
  if (Status s = mark_staged(page); !s.ok()) return s;
  zero_bits_[page / 64] |= std::uint64_t{1} << (page % 64);  // a slot it has stays unused
  return {};
}

Status ImageStore::mark_staged(std::uint64_t page) {
  if (staging_epoch_ == 0) return Status::error("page " + std::to_string(page) + " outside a checkpoint");
  if (page >= page_count_)
    return Status::error("page " + std::to_string(page) + " is outside the guest image (" +
                         std::to_string(page_count_) + " pages)");
  std::uint64_t& word = staged_bits_[page / 64];
  std::uint64_t bit = std::uint64_t{1} << (page % 64);
  if (!(word & bit)) {
    word |= bit;
    staged_list_.push_back(page);
    slot_of_[page] = kNoSlot;
  }
  return {};
}

Status ImageStore::stage_state(std::vector<std::uint8_t> blob) {
  if (staging_epoch_ == 0) return Status::error("state blob outside a checkpoint");
  staging_state_ = std::move(blob);
  have_state_ = true;
  return {};
}

// After a commit or an abort: no page is staged (a commit has taken the list).
void ImageStore::end_staging() {
  for (std::uint64_t p : staged_list_) staged_bits_[p / 64] = zero_bits_[p / 64] = 0;
  in_image_.clear();
  staged_list_.clear();
  staging_state_.clear();
  have_state_ = false;
  staging_epoch_ = 0;
}

void ImageStore::abort(const std::string& why) {
  if (staging_epoch_ == 0) return;
  last_abort_ = "checkpoint " + std::to_string(staging_epoch_) + " discarded: " + why;
  zero_image_pages(in_image_);  // no content was committed there: zeros again
  for (std::uint64_t p : in_image_) slot_of_[p] = kNoSlot;
  end_staging();
}

void ImageStore::zero_image_pages(const std::vector<std::uint64_t>& pages) {
  for (std::uint64_t p : pages)
    if (!owns_memory_ || ::madvise(image_ + p * page_size_, page_size_, MADV_DONTNEED) != 0)
      std::memset(image_ + p * page_size_, 0, page_size_);
}

Status ImageStore::commit(const CheckpointSummary& expected) {
  std::string problem;
  if (staging_epoch_ == 0)
    problem = "no checkpoint is being received";
  else if (expected.epoch != staging_epoch_)
    problem =
        "End names checkpoint " + std::to_string(expected.epoch) + ", receiving " + std::to_string(staging_epoch_);
  else if (staged_list_.size() != expected.distinct_pages)
    problem = "received " + std::to_string(staged_list_.size()) + " distinct pages, primary sent " +
              std::to_string(expected.distinct_pages);
  else if (!have_state_)
    problem = "no state blob received";
  else if (staging_state_.size() != expected.state_length)
    problem = "state blob has " + std::to_string(staging_state_.size()) + " bytes, primary sent " +
              std::to_string(expected.state_length);
  else if (crc32c(staging_state_) != expected.state_crc)
    problem = "state blob checksum mismatch";
  if (!problem.empty()) {
    std::uint64_t e = staging_epoch_ ? staging_epoch_ : expected.epoch;
    abort(problem);
    return Status::error("checkpoint " + std::to_string(e) + " refused: " + problem +
                         "; the image stays at checkpoint " + std::to_string(committed_epoch()));
  }
  {
    std::lock_guard<std::mutex> lock(committed_mutex_);  // the commit point
    unapplied_.swap(staged_list_);                       // begin() applied the last one
    for (std::uint64_t p : unapplied_) {
      staged_bits_[p / 64] = 0;
      if (!((zero_bits_[p / 64] >> (p % 64)) & 1)) content_bits_[p / 64] |= std::uint64_t{1} << (p % 64);
    }
    committed_state_.swap(staging_state_);
    committed_epoch_ = staging_epoch_;
  }
  end_staging();
  return {};
}

std::uint64_t ImageStore::committed_epoch() const {
  std::lock_guard<std::mutex> lock(committed_mutex_);
  return committed_epoch_;
}

void ImageStore::read_committed(const std::function<void(const CommittedImage&)>& fn) {
  // A checkpoint being received keeps going, but out of the image: its
  // pages read there move to slots, and the image holds zeros there again.
  for (std::uint64_t p : in_image_) {
    slot_of_[p] = next_slot();
    std::memcpy(page_ptr(slots_, slot_of_[p]), page_ptr(image_, p), page_size_);
  }
  zero_image_pages(in_image_);
  in_image_.clear();
  std::lock_guard<std::mutex> lock(committed_mutex_);
  apply_committed();
  fn(CommittedImage{committed_epoch_, {image_, bytes_}, committed_state_});
}

}  // namespace vmha
