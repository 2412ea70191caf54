// AddressSpace: the guest process's virtual memory — its mappings (VMAs),
// brk, and the VMM's access to guest pointers (translation, copy in/out,
// scatter lists for host I/O straight into guest frames).
#pragma once
#include <sys/uio.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "vmha/mem/guest_memory.h"
#include "vmha/mem/page_table.h"

namespace vmha {

struct Vma {
  uint64_t start = 0, end = 0;
  int prot = 0;   // PROT_*
  int flags = 0;  // MAP_* as the guest asked
};

class AddressSpace {
 public:
  AddressSpace(GuestMemory& mem, PageTable& pt) : mem_(mem), pt_(pt) {}

  // mmap of anonymous memory (file contents are copied in by the caller).
  // Returns the address or -errno.
  int64_t map(uint64_t addr, uint64_t len, int prot, int flags);
  int unmap(uint64_t addr, uint64_t len);
  int protect(uint64_t addr, uint64_t len, int prot);
  int64_t remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr);
  int64_t brk(uint64_t want);
  // MADV_DONTNEED: zeroes the mapped, writable pages of the range; 0 or -EINVAL.
  int discard(uint64_t addr, uint64_t len);
  void init_brk(uint64_t start) { brk_start_ = brk_cur_ = start; }

  // fork: this (empty) address space becomes a copy of `parent`'s: its
  // mappings, brk, and a fresh frame with the same contents for every page
  // the parent has backed (an eager copy), except MAP_SHARED anonymous
  // memory and read-only pages, whose frames both map (GuestMemory::
  // share_frame; a read-only page gets a frame of its own when an mprotect
  // makes it writable). false when memory ran out.
  bool copy_from(AddressSpace& parent);
  // Unmaps everything (exec, exit); the page tables stay (page_table.h).
  void release_all();
  PageTable& page_table() { return pt_; }

  // Maps fixed pages for the loader and the stack (no VMA search).
  bool map_fixed(uint64_t start, uint64_t end, int prot, int flags);

  // Guest pointers. All return false (the syscall then fails with EFAULT) when
  // any byte is unmapped, not user-accessible, or (for writes) read-only.
  bool gather(uint64_t va, uint64_t len, bool write, std::vector<iovec>& iov);
  bool copy_in(void* dst, uint64_t va, uint64_t len);
  bool copy_out(uint64_t va, const void* src, uint64_t len);
  // -EFAULT, -ENAMETOOLONG or 0.
  int read_string(uint64_t va, std::string& out, size_t max = 4096);
  // Logs the first `bytes` of a scatter list filled by host I/O.
  void note_written(const std::vector<iovec>& iov, uint64_t bytes);

  // True after a change that the shadow TLB must forget (cleared by the VM).
  bool take_flush() {
    bool f = flush_;
    flush_ = false;
    return f;
  }
  // Changes with every change the shadow TLB must forget, never taken: a
  // helper vCPU reloads the tables when it differs from what it loaded.
  // Unique across address spaces.
  uint64_t generation() const { return generation_; }
  // The generation vCPU 0 last loaded these tables at (the VMM's
  // bookkeeping): unchanged since, the same root goes in again.
  uint64_t loaded_generation() const { return loaded_generation_; }
  void set_loaded_generation(uint64_t g) { loaded_generation_ = g; }

  // State for serialisation.
  const std::map<uint64_t, Vma>& vmas() const { return vmas_; }
  void set_vmas(std::map<uint64_t, Vma> v) { vmas_ = std::move(v); }
  uint64_t brk_start() const { return brk_start_; }
  uint64_t brk_current() const { return brk_cur_; }
  void set_brk(uint64_t start, uint64_t cur) {
    brk_start_ = start;
    brk_cur_ = cur;
  }

 private:
  static uint64_t pte_flags(int prot);
  bool shared_anonymous(uint64_t va) const;  // inside a MAP_SHARED|MAP_ANONYMOUS mapping
  // No mapping, move or brk step may be larger than the guest's memory (even
  // PROT_NONE ones take page-table entries): refused before any page loop.
  uint64_t max_length() const { return mem_.size(); }
  bool overlaps(uint64_t start, uint64_t end) const;
  uint64_t find_free(uint64_t len) const;
  void insert(const Vma& v);
  void carve(uint64_t start, uint64_t end);  // removes [start,end) from VMAs
  bool populate(uint64_t start, uint64_t end, int prot);
  void release(uint64_t start, uint64_t end);

  GuestMemory& mem_;
  PageTable& pt_;
  std::map<uint64_t, Vma> vmas_;
  uint64_t brk_start_ = 0, brk_cur_ = 0;
  bool flush_ = false;
  uint64_t generation_ = next_generation();
  uint64_t loaded_generation_ = 0;
  void mark_changed() {
    flush_ = true;
    generation_ = next_generation();
  }
  static uint64_t next_generation();
};

}  // namespace vmha
