// DirtyTracker: which guest frames changed since the last harvest. One
// interface over KVM's dirty bitmap with hot pages left writable (async
// replication's default, hot_tracker.h), KVM's dirty ring, KVM's dirty bitmap
// (baseline) and "none"; every tracker also reports the VMM's own writes (VmmWriteLog), which
// KVM does not see. harvest() may run on another thread while the vCPU runs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/track/vmm_write_log.h"

namespace vmha {

enum class TrackerKind { kRing, kBitmap, kNone, kHot };
Status parse_tracker_kind(const std::string& name, TrackerKind* out);
const char* tracker_name(TrackerKind kind);

struct TrackerStats {
  uint64_t harvests = 0;
  uint64_t guest_pages = 0;  // reported from KVM's log
  uint64_t vmm_pages = 0;    // reported from the VMM-write log
  uint64_t ring_full_exits = 0;
};

class DirtyTracker {
 public:
  virtual ~DirtyTracker() = default;
  virtual TrackerKind kind() const = 0;

  // Set-up, in KVM's required order: VM created → memslot flags → vCPU created.
  virtual Status attach_vm(int vm_fd) {
    (void)vm_fd;
    return Status();
  }
  virtual uint32_t memslot_flags() const { return 0; }
  virtual Status attach_vcpu(int vcpu_fd) {
    (void)vcpu_fd;
    return Status();
  }
  void attach_log(VmmWriteLog* log) { log_ = log; }

  // Sorted, unique guest frame numbers written since the previous harvest,
  // by the guest or by the VMM. Thread-safe.
  virtual Status harvest(std::vector<uint64_t>& pfns) = 0;
  // The same while the guest runs (pre-copy): a tracker may leave pages it
  // reports at every harvest anyway for the one at the pause.
  virtual Status harvest_running(std::vector<uint64_t>& pfns) { return harvest(pfns); }
  // Pages every harvest reports without their being written since (left
  // writable: they cost no fault).
  virtual uint64_t hot_pages() { return 0; }

  // About how many pages harvest() would return now (repeats counted
  // once per report; the bitmap tracker counts only the VMM's writes).
  // Reads the logs without resetting them, so it costs the guest nothing.
  virtual uint64_t pending_pages() { return log_ ? log_->pending() : 0; }

  // Called on the vCPU thread on KVM_EXIT_DIRTY_RING_FULL.
  virtual Status on_ring_full() { return Status(); }

  TrackerStats stats() const { return stats_; }

 protected:
  void add_vmm_pages(std::vector<uint64_t>& pfns);
  static void sort_unique(std::vector<uint64_t>& pfns);
  VmmWriteLog* log_ = nullptr;
  TrackerStats stats_;
};

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, uint64_t guest_bytes);

}  // namespace vmha
