#include "vmha/track/ring_tracker.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace vmha {

namespace {
constexpr uint32_t kRingBytes = 1u << 20;  // 65536 entries of 16 bytes
}

RingTracker::~RingTracker() {
  for (Ring& r : rings_) munmap(r.gfns, map_bytes_);
}

Status RingTracker::attach_vm(int vm_fd) {
  vm_fd_ = vm_fd;
  int max = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_DIRTY_LOG_RING);
  if (max <= 0) return Status::error("KVM has no dirty ring (KVM_CAP_DIRTY_LOG_RING); use --tracker bitmap");
  uint32_t bytes = std::min<uint32_t>(kRingBytes, static_cast<uint32_t>(max));
  kvm_enable_cap cap{};
  cap.cap = KVM_CAP_DIRTY_LOG_RING;
  cap.args[0] = bytes;
  if (ioctl(vm_fd, KVM_ENABLE_CAP, &cap) < 0) return Status::error(errno_text("KVM_ENABLE_CAP(DIRTY_LOG_RING)"));
  entries_ = bytes / sizeof(kvm_dirty_gfn);
  return Status();
}

uint32_t RingTracker::memslot_flags() const { return KVM_MEM_LOG_DIRTY_PAGES; }

Status RingTracker::attach_vcpu(int vcpu_fd) {
  map_bytes_ = size_t(entries_) * sizeof(kvm_dirty_gfn);
  void* p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu_fd,
                 KVM_DIRTY_LOG_PAGE_OFFSET * sysconf(_SC_PAGESIZE));
  if (p == MAP_FAILED) return Status::error(errno_text("mmap of the dirty ring"));
  std::lock_guard<std::mutex> lock(mu_);
  rings_.push_back({static_cast<kvm_dirty_gfn*>(p), 0});
  return Status();
}

Status RingTracker::collect() {
  uint32_t n = 0;
  for (Ring& r : rings_) {
    for (;; ++n) {
      kvm_dirty_gfn& e = r.gfns[r.fetch % entries_];
      uint32_t flags = __atomic_load_n(&e.flags, __ATOMIC_ACQUIRE);
      if (!(flags & KVM_DIRTY_GFN_F_DIRTY)) break;
      pending_.push_back(e.offset);  // one memslot (0): offset is the frame number
      __atomic_store_n(&e.flags, KVM_DIRTY_GFN_F_RESET, __ATOMIC_RELEASE);
      ++r.fetch;
    }
  }
  stats_.guest_pages += n;
  if (n && ioctl(vm_fd_, KVM_RESET_DIRTY_RINGS, 0) < 0) return Status::error(errno_text("KVM_RESET_DIRTY_RINGS"));
  return Status();
}

Status RingTracker::harvest(std::vector<uint64_t>& pfns) {
  std::lock_guard<std::mutex> lock(mu_);
  Status s = collect();
  pfns.swap(pending_);
  pending_.clear();
  add_vmm_pages(pfns);
  sort_unique(pfns);
  ++stats_.harvests;
  return s;
}

uint64_t RingTracker::pending_pages() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t n = 0;
  for (const Ring& r : rings_) {
    uint32_t k = 0;
    while (k < entries_ &&
           (__atomic_load_n(&r.gfns[(r.fetch + k) % entries_].flags, __ATOMIC_ACQUIRE) & KVM_DIRTY_GFN_F_DIRTY))
      ++k;
    n += k;
  }
  return n + pending_.size() + DirtyTracker::pending_pages();
}

Status RingTracker::on_ring_full() {
  // A vCPU thread drains the rings itself into the pending set: it blocks
  // on the lock while a harvester is working, and never spins.
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.ring_full_exits;
  return collect();
}

}  // namespace vmha
