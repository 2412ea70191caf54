// GuestMemory: the guest's physical memory, ONE contiguous host mapping that
// is registered with KVM once (and, by the replication layer, with UCX once).
// Frames are handed out by a bump allocator with a free list; every byte the
// VMM writes goes through write() or is reported with note_write(), so the
// VMM-write log stays exact.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "vmha/common/status.h"
#include "vmha/common/x86.h"
#include "vmha/track/vmm_write_log.h"

namespace vmha {

class GuestMemory {
 public:
  ~GuestMemory();
  static Status create(uint64_t bytes, std::unique_ptr<GuestMemory>* out);
  // Uses caller memory (zero-filled, page-aligned, `bytes` a multiple of 2 MiB,
  // outliving the VM), e.g. a region from the replication transport's
  // allocate_region() so the backup reads guest pages directly.
  static Status create_at(uint8_t* base, uint64_t bytes, std::unique_ptr<GuestMemory>* out);

  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }
  uint8_t* host(uint64_t gpa) const { return base_ + gpa; }
  VmmWriteLog& write_log() { return log_; }

  // Copies bytes into guest physical memory and logs the pages.
  void write(uint64_t gpa, const void* src, uint64_t len) {
    std::memcpy(base_ + gpa, src, len);
    log_.note(gpa, len);
  }
  void note_write(uint64_t gpa, uint64_t len) { log_.note(gpa, len); }

  // A zeroed frame, or 0 when memory is exhausted (frame 0 is never handed out).
  uint64_t alloc_frame();
  void free_frame(uint64_t gpa) {
    std::vector<uint64_t> one{gpa};
    free_frames(one);
  }
  // Zeroes the frames, makes KVM forget its mappings of them (below) and puts
  // them on the free list. A shared frame (below) loses one reference
  // instead, and KVM forgets its mappings. Sorts `gpas`.
  void free_frames(std::vector<uint64_t>& gpas);

  // Frames that more than one process maps (MAP_SHARED anonymous memory a
  // fork passed on): one more reference to `gpa`.
  void share_frame(uint64_t gpa) { ++extra_refs_[gpa]; }
  bool is_shared(uint64_t gpa) const { return extra_refs_.count(gpa) != 0; }
  // One reference less to a shared frame (a process took a copy of its own).
  void unshare_frame(uint64_t gpa) {
    auto it = extra_refs_.find(gpa);
    if (it != extra_refs_.end() && --it->second == 0) extra_refs_.erase(it);
  }
  // Every frame's references beyond the first (a restore counts them from
  // the page tables; they are not part of the state).
  void set_shared_frames(std::unordered_map<uint64_t, uint32_t> extra) { extra_refs_ = std::move(extra); }
  size_t shared_frames() const { return extra_refs_.size(); }

  // This KVM has no EPT: its shadow MMU caches guest translations and is not
  // told when the VMM edits guest page tables from the host. It is told when
  // the host mapping of a frame changes (MMU notifier), so a frame whose guest
  // mapping went away, moved or lost a permission must pass through here, or
  // the guest keeps reaching it through the old address (a freed frame then
  // reused elsewhere corrupts both users). Contents are kept. Sorts `gpas`.
  void forget_guest_mappings(std::vector<uint64_t>& gpas);
  uint64_t frames_in_use() const { return next_ / x86::kPageSize - free_.size(); }

  // Allocator state, for serialisation.
  uint64_t bump() const { return next_; }
  const std::vector<uint64_t>& free_list() const { return free_; }
  void set_allocator(uint64_t bump, std::vector<uint64_t> free_list);

 private:
  GuestMemory(uint8_t* base, uint64_t size) : base_(base), size_(size), log_(size) {}
  uint8_t* base_;
  bool external_ = false;  // caller memory: not unmapped; freed frames zeroed by memset
  uint64_t size_;
  uint64_t next_ = x86::kPageSize;
  std::vector<uint64_t> free_;
  std::unordered_map<uint64_t, uint32_t> extra_refs_;
  VmmWriteLog log_;
};

}  // namespace vmha
