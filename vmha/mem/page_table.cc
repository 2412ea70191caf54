#include "vmha/mem/page_table.h"

#include "vmha/mem/guest_layout.h"

namespace vmha {

using namespace layout;

namespace {
constexpr uint64_t kTableFlags = kPtePresent | kPteWrite | kPteUser | kPteAccessed;
}

bool PageTable::init() {
  roots_[0] = mem_.alloc_frame();
  roots_[1] = mem_.alloc_frame();
  cur_ = 0;
  return roots_[0] && roots_[1];
}

uint64_t* PageTable::leaf(uint64_t va, bool create) {
  uint64_t table = roots_[cur_];
  for (int level = 3; level > 0; --level) {
    uint64_t index = (va >> (kPageShift + kTableIndexBits * level)) & kTableIndexMask;
    uint64_t* entry = reinterpret_cast<uint64_t*>(mem_.host(table)) + index;
    if (!(*entry & kPtePresent)) {
      if (!create) return nullptr;
      uint64_t frame = mem_.alloc_frame();
      if (!frame) return nullptr;
      uint64_t value = frame | kTableFlags;
      mem_.write(table + index * kPteBytes, &value, kPteBytes);
      if (level == 3) {  // keep both top-level copies identical
        uint64_t other = roots_[cur_ ^ 1];
        mem_.write(other + index * kPteBytes, &value, kPteBytes);
      }
    }
    table = *entry & kPteFrame;
  }
  return reinterpret_cast<uint64_t*>(mem_.host(table)) + ((va >> kPageShift) & kTableIndexMask);
}

void PageTable::set_leaf(uint64_t* pte, uint64_t value) {
  *pte = value;
  mem_.note_write(reinterpret_cast<uint8_t*>(pte) - mem_.base(), kPteBytes);
}

bool PageTable::map(uint64_t va, uint64_t gpa, uint64_t flags) {
  uint64_t* pte = leaf(va, true);
  if (!pte) return false;
  set_leaf(pte, gpa | flags | kPteBacked | kPteAccessed | kPteDirty);
  return true;
}

uint64_t PageTable::translate(uint64_t va, bool write) {
  if (va >= kUserTop) return ~0ull;
  uint64_t* pte = leaf(va, false);
  if (!pte) return ~0ull;
  uint64_t e = *pte;
  if (!(e & kPtePresent) || !(e & kPteUser) || (write && !(e & kPteWrite))) return ~0ull;
  return (e & kPteFrame) | (va & (kPageSize - 1));
}

void PageTable::share_top_entry(const PageTable& from, int index) {
  const uint64_t value = reinterpret_cast<const uint64_t*>(from.mem_.host(from.roots_[from.cur_]))[index];
  for (uint64_t root : roots_) mem_.write(root + index * kPteBytes, &value, kPteBytes);
}

void PageTable::clear_user_leaves() {
  for_each_user_leaf([&](uint64_t va, uint64_t) { set_leaf(leaf(va, false), 0); });
}

uint64_t PageTable::flush_root() {
  int next = cur_ ^ 1;
  mem_.write(roots_[next], mem_.host(roots_[cur_]), kPageSize);
  cur_ = next;
  return roots_[cur_];
}

}  // namespace vmha
