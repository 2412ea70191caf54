#include "vmha/track/hot_tracker.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmha/common/x86.h"

namespace vmha {

HotTracker::HotTracker(uint64_t guest_bytes)
    : pages_(guest_bytes / x86::kPageSize),
      bitmap_((pages_ + 63) / 64),
      hot_(bitmap_.size()),
      clear_(bitmap_.size()),
      last_dirty_(pages_),
      hot_until_(pages_) {}

bool HotTracker::supported() {
  int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) return false;
  int caps = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2);
  close(kvm);
  return caps > 0 && (caps & KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE);
}

Status HotTracker::attach_vm(int vm_fd) {
  vm_fd_ = vm_fd;
  int caps = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2);
  if (caps <= 0 || !(caps & KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE))
    return Status::error("KVM cannot leave re-protection to the VMM (KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2); use --tracker ring");
  kvm_enable_cap cap{};
  cap.cap = KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2;
  cap.args[0] = KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE;  // not INIT_SET: a new slot starts clean and protected
  if (ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0)
    return Status::error(errno_text("KVM_ENABLE_CAP(MANUAL_DIRTY_LOG_PROTECT2)"));
  return Status();
}

uint32_t HotTracker::memslot_flags() const { return KVM_MEM_LOG_DIRTY_PAGES; }

Status HotTracker::fetch() {
  kvm_dirty_log log{};
  log.slot = 0;
  log.dirty_bitmap = bitmap_.data();
  if (ioctl(vm_fd_, KVM_GET_DIRTY_LOG, &log) < 0) return Status::error(errno_text("KVM_GET_DIRTY_LOG"));
  return Status();
}

Status HotTracker::harvest(std::vector<uint64_t>& pfns) {
  std::lock_guard<std::mutex> lock(mu_);
  return harvest_locked(pfns, true);
}

Status HotTracker::harvest_running(std::vector<uint64_t>& pfns) {
  std::lock_guard<std::mutex> lock(mu_);
  return harvest_locked(pfns, false);
}

Status HotTracker::harvest_locked(std::vector<uint64_t>& pfns, bool paused) {
  pfns.clear();
  if (Status s = fetch(); !s.ok()) return s;
  size_t first = bitmap_.size(), last = 0;  // words with pages to protect again
  for (size_t w = 0; w < bitmap_.size(); ++w) {
    const uint64_t was_hot = hot_[w];
    uint64_t fresh = bitmap_[w] & ~was_hot, protect = 0;
    // Hot pages are reported at the checkpoint whether or not they were
    // written (they are writable, so nothing says).
    uint64_t report = paused ? (fresh | was_hot) : fresh;
    if (!report) continue;
    for (uint64_t bits = fresh; bits; bits &= bits - 1) {
      const uint64_t bit = bits & -bits;
      const uint64_t p = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
      if (p >= pages_) break;
      const uint32_t seen = last_dirty_[p];
      if (seen != 0 && seen + 1 >= epoch_ && hot_count_ < kMaxHotPages) {
        hot_[w] |= bit;  // written again this epoch or the last: leave it writable
        hot_until_[p] = epoch_ + kHotEpochs;
        ++hot_count_;
      } else {
        protect |= bit;
      }
      last_dirty_[p] = epoch_;
    }
    if (paused) {
      for (uint64_t bits = was_hot; bits; bits &= bits - 1) {
        const uint64_t p = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
        if (hot_until_[p] > epoch_) continue;
        const uint64_t bit = bits & -bits;
        hot_[w] &= ~bit;  // cooled: protect it; a write makes it dirty (and soon hot) again
        protect |= bit;
        --hot_count_;
      }
    }
    for (uint64_t bits = report; bits; bits &= bits - 1) {
      const uint64_t p = w * 64 + static_cast<uint64_t>(__builtin_ctzll(bits));
      if (p < pages_) pfns.push_back(p);
    }
    stats_.guest_pages += static_cast<uint64_t>(__builtin_popcountll(fresh));
    clear_[w] = protect;
    if (protect) {
      first = std::min(first, w);
      last = w;
    }
  }
  if (first <= last) {
    kvm_clear_dirty_log c{};
    c.slot = 0;
    c.first_page = first * 64;
    c.num_pages = static_cast<uint32_t>(std::min<uint64_t>((last + 1) * 64, pages_) - first * 64);
    c.dirty_bitmap = clear_.data() + first;
    int rc = ioctl(vm_fd_, KVM_CLEAR_DIRTY_LOG, &c);
    for (size_t w = first; w <= last; ++w) clear_[w] = 0;
    if (rc < 0) return Status::error(errno_text("KVM_CLEAR_DIRTY_LOG"));
  }
  if (paused) ++epoch_;
  add_vmm_pages(pfns);
  sort_unique(pfns);
  ++stats_.harvests;
  return Status();
}

uint64_t HotTracker::pending_pages() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = log_ ? log_->pending() : 0;
  if (!fetch().ok()) return n;
  for (size_t w = 0; w < bitmap_.size(); ++w) n += static_cast<uint64_t>(__builtin_popcountll(bitmap_[w] & ~hot_[w]));
  return n;
}

uint64_t HotTracker::hot_pages() {
  std::lock_guard<std::mutex> lock(mu_);
  return hot_count_;
}

}  // namespace vmha
