// BitmapTracker: KVM's per-memslot dirty bitmap (KVM_GET_DIRTY_LOG), the
// classic live-migration baseline. Fetching the log also re-protects the pages.
#pragma once
#include <mutex>

#include "vmha/track/dirty_tracker.h"

namespace vmha {

class BitmapTracker : public DirtyTracker {
 public:
  explicit BitmapTracker(uint64_t guest_bytes);
  TrackerKind kind() const override { return TrackerKind::kBitmap; }
  Status attach_vm(int vm_fd) override {
    vm_fd_ = vm_fd;
    return Status();
  }
  uint32_t memslot_flags() const override;
  Status harvest(std::vector<uint64_t>& pfns) override;

 private:
  int vm_fd_ = -1;
  std::vector<uint64_t> bitmap_;
  std::mutex mu_;
};

}  // namespace vmha
