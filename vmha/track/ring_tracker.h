// RingTracker: KVM's per-vCPU dirty ring (KVM_CAP_DIRTY_LOG_RING). The ring
// is enabled on the VM fd before any vCPU exists and mapped from the vCPU fd.
// Entries are collected under a lock into a pending set, so the vCPU thread
// (ring full) and a harvester thread can both drain it without spinning.
#pragma once
#include <mutex>

#include "vmha/track/dirty_tracker.h"
#include <linux/kvm.h>

namespace vmha {

class RingTracker : public DirtyTracker {
 public:
  ~RingTracker() override;
  TrackerKind kind() const override { return TrackerKind::kRing; }
  Status attach_vm(int vm_fd) override;
  uint32_t memslot_flags() const override;
  Status attach_vcpu(int vcpu_fd) override;
  Status harvest(std::vector<uint64_t>& pfns) override;
  Status on_ring_full() override;
  uint64_t pending_pages() override;

 private:
  Status collect();  // ring → pending_, then KVM_RESET_DIRTY_RINGS; lock held
  int vm_fd_ = -1;
  kvm_dirty_gfn* ring_ = nullptr;
  uint32_t entries_ = 0;
  size_t map_bytes_ = 0;
  uint32_t fetch_ = 0;
  std::mutex mu_;
  std::vector<uint64_t> pending_;
};

}  // namespace vmha
