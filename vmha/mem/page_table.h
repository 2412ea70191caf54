// PageTable: the guest's 4-level x86-64 page tables, kept in guest memory and
// edited by the VMM. Entries are created with Accessed and Dirty already set,
// so the CPU never writes page-table pages behind the dirty log's back.
//
// Flushing: this KVM keeps a shadow TLB that reloading the same CR3 does not
// drop; loading a *copy* of the top-level table does. flush_root() makes that
// copy and returns the CR3 to load.
//
// Table frames are never freed, and an entry that points at a lower table
// never changes once made: KVM's shadow MMU finds its shadow of a table by
// the table's frame and is not told of the VMM's writes to it, so a table
// frame reused for other contents (freed and taken by another process's
// tables) is read through stale shadow entries (measured: ld.so saw another
// process's pages). A process that ends hands its whole table tree to the
// next one that needs one (sys/process_tree.h), leaves cleared.
#pragma once
#include <cstdint>

#include "vmha/mem/guest_memory.h"

namespace vmha {

class PageTable {
 public:
  explicit PageTable(GuestMemory& mem) : mem_(mem) {}
  // Allocates the two top-level frames; false when memory is exhausted.
  bool init();
  // Restores from serialised roots (the tables themselves are in guest memory).
  void set_roots(uint64_t a, uint64_t b, uint64_t current) {
    roots_[0] = a;
    roots_[1] = b;
    cur_ = current;
  }

  // Leaf entry for va, creating the intermediate tables when create is set.
  // nullptr when absent (or out of memory while creating).
  uint64_t* leaf(uint64_t va, bool create);
  // Maps va to frame gpa with PTE flags (present/write/user/noexec).
  bool map(uint64_t va, uint64_t gpa, uint64_t flags);
  void set_leaf(uint64_t* pte, uint64_t value);

  // Guest physical address for va if the page is present, user-accessible and
  // (when write is set) writable; ~0 otherwise.
  uint64_t translate(uint64_t va, bool write);

  // Calls fn(va, pte) for every non-zero leaf entry of the user half.
  template <typename Fn>
  void for_each_user_leaf(Fn fn);
  // Points this table's top-level entry `index` at the same lower tables as
  // `from`'s (the VMM's pages, shared by every guest process).
  void share_top_entry(const PageTable& from, int index);
  // Clears every leaf entry of the user half (their frames already
  // released). The tables themselves stay: see the class comment.
  void clear_user_leaves();

  uint64_t cr3() const { return roots_[cur_]; }
  uint64_t root(int i) const { return roots_[i]; }
  int current() const { return cur_; }
  uint64_t flush_root();

 private:
  uint64_t* table(uint64_t gpa) { return reinterpret_cast<uint64_t*>(mem_.host(gpa)); }
  GuestMemory& mem_;
  uint64_t roots_[2] = {0, 0};
  int cur_ = 0;
};

template <typename Fn>
void PageTable::for_each_user_leaf(Fn fn) {
  // Levels 3..1 of x86-64 paging; the user half is the top table's lower 256 entries.
  constexpr uint64_t kPresent = 1, kFrame = 0x000ffffffffff000ull;
  uint64_t* l4 = table(roots_[cur_]);
  for (uint64_t i4 = 0; i4 < 256; ++i4) {
    if (!(l4[i4] & kPresent)) continue;
    uint64_t* l3 = table(l4[i4] & kFrame);
    for (uint64_t i3 = 0; i3 < 512; ++i3) {
      if (!(l3[i3] & kPresent)) continue;
      uint64_t* l2 = table(l3[i3] & kFrame);
      for (uint64_t i2 = 0; i2 < 512; ++i2) {
        if (!(l2[i2] & kPresent)) continue;
        uint64_t* l1 = table(l2[i2] & kFrame);
        for (uint64_t i1 = 0; i1 < 512; ++i1)
          if (l1[i1]) fn((i4 << 39) | (i3 << 30) | (i2 << 21) | (i1 << 12), l1[i1]);
      }
    }
  }
}

}  // namespace vmha
