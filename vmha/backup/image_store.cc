#include "vmha/backup/image_store.h"

#include <sys/mman.h>

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

}  // namespace

ImageStore::ImageStore(std::size_t page_size, std::uint64_t page_count)
    : page_size_(page_size), page_count_(page_count), bytes_(page_size * page_count) {
  committed_ = map_zeroed(bytes_ ? bytes_ : 1);
  staging_ = map_zeroed(bytes_ ? bytes_ : 1);
  staged_bits_.assign((page_count + 63) / 64, 0);
}

ImageStore::ImageStore(std::size_t page_size, std::uint64_t page_count, std::span<std::uint8_t> image_a,
                       std::span<std::uint8_t> image_b)
    : page_size_(page_size), page_count_(page_count), bytes_(page_size * page_count) {
  if (image_a.size() < bytes_ || image_b.size() < bytes_)
    throw std::invalid_argument("ImageStore: image memory smaller than page_size * page_count");
  committed_ = image_a.data();
  staging_ = image_b.data();
  owns_images_ = false;
  staged_bits_.assign((page_count + 63) / 64, 0);
}

ImageStore::~ImageStore() {
  if (!owns_images_) return;
  ::munmap(committed_, bytes_ ? bytes_ : 1);
  ::munmap(staging_, bytes_ ? bytes_ : 1);
}

void ImageStore::resync_staging() {
  for (std::uint64_t p : diverged_) std::memcpy(page_ptr(staging_, p), page_ptr(committed_, p), page_size_);
  diverged_.clear();
}

Status ImageStore::begin(std::uint64_t epoch) {
  if (staging_epoch_ != 0) abort("superseded by checkpoint " + std::to_string(epoch));
  std::uint64_t committed = committed_epoch();
  if (epoch <= committed)
    return Status::error("checkpoint " + std::to_string(epoch) + " is not newer than the committed checkpoint " +
                         std::to_string(committed));
  resync_staging();
  staging_epoch_ = epoch;
  have_state_ = false;
  staging_state_.clear();
  return {};
}

Result<std::uint8_t*> ImageStore::stage_page(std::uint64_t page) {
  if (staging_epoch_ == 0) return Status::error("page " + std::to_string(page) + " outside a checkpoint");
  if (page >= page_count_)
    return Status::error("page " + std::to_string(page) + " is outside the guest image (" +
                         std::to_string(page_count_) + " pages)");
  std::uint64_t& word = staged_bits_[page / 64];
  std::uint64_t bit = std::uint64_t{1} << (page % 64);
  if (!(word & bit)) {
    word |= bit;
    staged_list_.push_back(page);
  }
  return page_ptr(staging_, page);
}

Status ImageStore::stage_state(std::vector<std::uint8_t> blob) {
  if (staging_epoch_ == 0) return Status::error("state blob outside a checkpoint");
  staging_state_ = std::move(blob);
  have_state_ = true;
  return {};
}

// After a commit (swapped) or an abort, staging differs from committed on the
// pages written for this checkpoint: they are the next catch-up's work.
void ImageStore::end_staging() {
  for (std::uint64_t p : staged_list_) {
    staged_bits_[p / 64] = 0;
    diverged_.push_back(p);
  }
  staged_list_.clear();
  staging_state_.clear();
  have_state_ = false;
  staging_epoch_ = 0;
}

void ImageStore::abort(const std::string& why) {
  if (staging_epoch_ == 0) return;
  last_abort_ = "checkpoint " + std::to_string(staging_epoch_) + " discarded: " + why;
  end_staging();
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
    std::unique_lock<std::shared_mutex> lock(committed_mutex_);  // the commit point
    std::swap(committed_, staging_);
    committed_state_.swap(staging_state_);
    committed_epoch_ = staging_epoch_;
  }
  end_staging();
  return {};
}

std::uint64_t ImageStore::committed_epoch() const {
  std::shared_lock<std::shared_mutex> lock(committed_mutex_);
  return committed_epoch_;
}

void ImageStore::read_committed(const std::function<void(const CommittedImage&)>& fn) const {
  std::shared_lock<std::shared_mutex> lock(committed_mutex_);
  fn(CommittedImage{committed_epoch_, {committed_, bytes_}, committed_state_});
}

}  // namespace vmha
