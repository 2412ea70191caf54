// RingTracker: KVM's per-vCPU dirty rings (KVM_CAP_DIRTY_LOG_RING). The ring
// size is set on the VM fd before any vCPU exists; each vCPU's ring is mapped
// from its fd, and a harvest drains all of them.
// Entries are collected under a lock into a pending set, so the vCPU thread
// (ring full) and a harvester thread can both drain it without spinning.
#pragma once
#include <mutex>
#include <vector>

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
  Status collect();  // rings → pending_, then KVM_RESET_DIRTY_RINGS; lock held
  struct Ring {
    kvm_dirty_gfn* gfns = nullptr;
    uint32_t fetch = 0;
  };
  int vm_fd_ = -1;
  std::vector<Ring> rings_;
  uint32_t entries_ = 0;
  size_t map_bytes_ = 0;
  std::mutex mu_;
  std::vector<uint64_t> pending_;
};

}  // namespace vmha
