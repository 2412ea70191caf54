#include "vmha/track/bitmap_tracker.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "vmha/common/x86.h"

namespace vmha {

BitmapTracker::BitmapTracker(uint64_t guest_bytes) : bitmap_((guest_bytes / x86::kPageSize + 63) / 64) {}

uint32_t BitmapTracker::memslot_flags() const { return KVM_MEM_LOG_DIRTY_PAGES; }

Status BitmapTracker::harvest(std::vector<uint64_t>& pfns) {
  std::lock_guard<std::mutex> lock(mu_);
  pfns.clear();
  kvm_dirty_log log{};
  log.slot = 0;
  log.dirty_bitmap = bitmap_.data();
  if (ioctl(vm_fd_, KVM_GET_DIRTY_LOG, &log) < 0) return Status::error(errno_text("KVM_GET_DIRTY_LOG"));
  for (size_t w = 0; w < bitmap_.size(); ++w) {
    uint64_t bits = bitmap_[w];
    while (bits) {
      pfns.push_back(w * 64 + __builtin_ctzll(bits));
      bits &= bits - 1;
    }
  }
  stats_.guest_pages += pfns.size();
  add_vmm_pages(pfns);
  sort_unique(pfns);
  ++stats_.harvests;
  return Status();
}

}  // namespace vmha
