// HotTracker: KVM's dirty bitmap with re-protection left to the VMM
// (KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2). Without PML every page written after a
// harvest faults again (7.5-25 us on these hosts), so a guest that rewrites
// the same pages every epoch pays a fault per page per checkpoint. A page
// found dirty in two consecutive epochs is "hot": it stays writable and is
// reported dirty at every checkpoint (copying it at the pause costs under a
// microsecond) until kHotEpochs checkpoints later, when it is protected again
// (a page no longer written then stops being copied). At most kMaxHotPages
// are hot, so the pause stays short.
#pragma once
#include <mutex>
#include <vector>

#include "vmha/track/dirty_tracker.h"

namespace vmha {

class HotTracker : public DirtyTracker {
 public:
  static constexpr uint32_t kHotEpochs = 32;
  static constexpr uint64_t kMaxHotPages = 2048;  // 8 MiB: about 1 ms of copying at the pause

  explicit HotTracker(uint64_t guest_bytes);
  // Whether this host's KVM offers it.
  static bool supported();
  TrackerKind kind() const override { return TrackerKind::kHot; }
  Status attach_vm(int vm_fd) override;
  uint32_t memslot_flags() const override;
  // At a checkpoint (the guest paused): pages written since the last
  // harvest and every hot page; a checkpoint ends an epoch.
  Status harvest(std::vector<uint64_t>& pfns) override;
  // While the guest runs (pre-copy): pages written since the last harvest,
  // not the hot ones (they are taken at the pause).
  Status harvest_running(std::vector<uint64_t>& pfns) override;
  uint64_t pending_pages() override;
  uint64_t hot_pages() override;

 private:
  Status harvest_locked(std::vector<uint64_t>& pfns, bool paused);
  Status fetch();  // KVM's bitmap into bitmap_ (nothing is cleared)
  int vm_fd_ = -1;
  uint64_t pages_;
  std::vector<uint64_t> bitmap_, hot_, clear_;
  std::vector<uint32_t> last_dirty_;  // the epoch a page was last found dirty in (0: never)
  std::vector<uint32_t> hot_until_;   // the epoch whose checkpoint protects a hot page again
  uint32_t epoch_ = 1;
  uint64_t hot_count_ = 0;
  std::mutex mu_;
};

}  // namespace vmha
