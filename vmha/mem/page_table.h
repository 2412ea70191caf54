// PageTable: the guest's 4-level x86-64 page tables, kept in guest memory and
// edited by the VMM. Entries are created with Accessed and Dirty already set,
// so the CPU never writes page-table pages behind the dirty log's back.
//
// Flushing: this KVM keeps a shadow TLB that reloading the same CR3 does not
// drop; loading a *copy* of the top-level table does. flush_root() makes that
// copy and returns the CR3 to load.
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

  uint64_t cr3() const { return roots_[cur_]; }
  uint64_t root(int i) const { return roots_[i]; }
  int current() const { return cur_; }
  uint64_t flush_root();

 private:
  GuestMemory& mem_;
  uint64_t roots_[2] = {0, 0};
  int cur_ = 0;
};

}  // namespace vmha
