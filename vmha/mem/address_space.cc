#include "vmha/mem/address_space.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "vmha/mem/guest_layout.h"

namespace vmha {

uint64_t AddressSpace::next_generation() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

using namespace layout;

uint64_t AddressSpace::pte_flags(int prot) {
  uint64_t f = kPteUser;
  if (prot != PROT_NONE) f |= kPtePresent;
  if (prot & PROT_WRITE) f |= kPteWrite;
  if (!(prot & PROT_EXEC)) f |= kPteNoExec;
  return f;
}

bool AddressSpace::overlaps(uint64_t start, uint64_t end) const {
  auto it = vmas_.upper_bound(start);
  if (it != vmas_.begin() && std::prev(it)->second.end > start) return true;
  return it != vmas_.end() && it->first < end;
}

uint64_t AddressSpace::find_free(uint64_t len) const {
  // Top-down from kMmapTop, like Linux's default layout.
  uint64_t top = kMmapTop;
  for (auto it = vmas_.rbegin(); it != vmas_.rend(); ++it) {
    if (it->second.start >= top) continue;
    if (it->second.end <= top && top - it->second.end >= len) return top - len;
    top = std::min(top, it->second.start);
  }
  if (top >= kMmapBottom + len) return top - len;
  return 0;
}

void AddressSpace::insert(const Vma& v) { vmas_[v.start] = v; }

void AddressSpace::carve(uint64_t start, uint64_t end) {
  auto it = vmas_.upper_bound(start);
  if (it != vmas_.begin()) --it;
  while (it != vmas_.end() && it->first < end) {
    Vma v = it->second;
    if (v.end <= start) {
      ++it;
      continue;
    }
    it = vmas_.erase(it);
    if (v.start < start) {
      Vma l = v;
      l.end = start;
      insert(l);
    }
    if (v.end > end) {
      Vma r = v;
      r.start = end;
      insert(r);
      it = vmas_.find(end);
      ++it;
    }
  }
}

bool AddressSpace::populate(uint64_t start, uint64_t end, int prot) {
  uint64_t flags = pte_flags(prot);
  std::vector<uint64_t> downgraded;  // lost a permission: KVM must forget their mappings
  bool ok = true;
  for (uint64_t va = start; va < end; va += kPageSize) {
    uint64_t* pte = pt_.leaf(va, true);
    if (!pte) {
      ok = false;
      break;
    }
    if (*pte & kPteBacked) {
      // A private page shared since a fork because it was read-only gets a
      // frame of its own before it can be written.
      if ((flags & kPteWrite) && mem_.is_shared(*pte & kPteFrame) && !shared_anonymous(va)) {
        uint64_t own = mem_.alloc_frame();
        if (!own) {
          ok = false;
          break;
        }
        mem_.write(own, mem_.host(*pte & kPteFrame), kPageSize);
        downgraded.push_back(*pte & kPteFrame);  // this process's mapping of the shared frame goes
        mem_.unshare_frame(*pte & kPteFrame);
        pt_.set_leaf(pte, own | flags | kPteBacked | kPteAccessed | kPteDirty);
        continue;
      }
      bool lost = ((*pte & (kPtePresent | kPteWrite)) & ~flags) || ((flags & kPteNoExec) && !(*pte & kPteNoExec));
      if (lost) downgraded.push_back(*pte & kPteFrame);
      pt_.set_leaf(pte, (*pte & kPteFrame) | flags | kPteBacked | kPteAccessed | kPteDirty);
      continue;
    }
    if (prot == PROT_NONE) continue;  // reservations get frames when opened up
    uint64_t frame = mem_.alloc_frame();
    if (!frame) {
      ok = false;
      break;
    }
    pt_.set_leaf(pte, frame | flags | kPteBacked | kPteAccessed | kPteDirty);
  }
  if (!downgraded.empty()) mem_.forget_guest_mappings(downgraded);
  return ok;
}

void AddressSpace::release(uint64_t start, uint64_t end) {
  // Entries exist only inside VMAs: visiting those keeps munmap of a huge,
  // mostly empty range from stepping through every page of it.
  std::vector<uint64_t> frames;
  auto it = vmas_.upper_bound(start);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && it->first < end; ++it) {
    uint64_t from = std::max(it->second.start, start), to = std::min(it->second.end, end);
    for (uint64_t va = from; va < to; va += kPageSize) {
      uint64_t* pte = pt_.leaf(va, false);
      if (!pte || !*pte) continue;
      if (*pte & kPteBacked) frames.push_back(*pte & kPteFrame);
      pt_.set_leaf(pte, 0);
    }
  }
  if (!frames.empty()) mem_.free_frames(frames);
  mark_changed();
}

namespace {

bool zero_page(const uint8_t* p) {
  uint64_t any = 0;
  for (size_t i = 0; i < kPageSize; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    any |= v;
  }
  return any == 0;
}

}  // namespace

bool AddressSpace::copy_from(AddressSpace& parent) {
  vmas_ = parent.vmas_;
  brk_start_ = parent.brk_start_;
  brk_cur_ = parent.brk_cur_;
  bool ok = true;
  parent.pt_.for_each_user_leaf([&](uint64_t va, uint64_t e) {
    if (!ok) return;
    uint64_t* pte = pt_.leaf(va, true);
    if (!pte) {
      ok = false;
      return;
    }
    if (!(e & kPteBacked)) {
      pt_.set_leaf(pte, e);
      return;
    }
    // The same frame for shared memory (both see each other's writes) and
    // for a page neither may write (program text, read-only data: half of
    // a shell's pages): populate() copies it before making it writable.
    if (shared_anonymous(va) || !(e & kPteWrite)) {
      mem_.share_frame(e & kPteFrame);
      pt_.set_leaf(pte, e);
      return;
    }
    uint64_t frame = mem_.alloc_frame();
    if (!frame) {
      ok = false;
      return;
    }
    // A page the parent never wrote (most of a stack) stays a fresh frame:
    // already zero, and no host memory until the child writes it.
    const uint8_t* src = mem_.host(e & kPteFrame);
    if (!zero_page(src)) mem_.write(frame, src, kPageSize);
    pt_.set_leaf(pte, frame | (e & ~kPteFrame));
  });
  mark_changed();
  return ok;
}

void AddressSpace::release_all() {
  std::vector<uint64_t> frames;
  pt_.for_each_user_leaf([&](uint64_t, uint64_t e) {
    if (e & kPteBacked) frames.push_back(e & kPteFrame);
  });
  if (!frames.empty()) mem_.free_frames(frames);
  pt_.clear_user_leaves();
  vmas_.clear();
  brk_start_ = brk_cur_ = 0;
  mark_changed();
}

bool AddressSpace::map_fixed(uint64_t start, uint64_t end, int prot, int flags) {
  carve(start, end);
  insert({start, end, prot, flags});
  mark_changed();
  return populate(start, end, prot);
}

int64_t AddressSpace::map(uint64_t addr, uint64_t len, int prot, int flags) {
  bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
  if (len == 0 || (fixed && (addr & (kPageSize - 1)))) return -EINVAL;
  // Checked before any loop: populating and releasing go page by page.
  if (len > max_length()) return -ENOMEM;
  addr = page_down(addr);  // a hint is only a hint
  len = page_up(len);
  uint64_t start;
  if (fixed) {
    if (addr < kMmapBottom || !fits_below(addr, len, kUserTop)) return -ENOMEM;
    if ((flags & MAP_FIXED_NOREPLACE) && overlaps(addr, addr + len)) return -EEXIST;
    release(addr, addr + len);
    start = addr;
  } else if (addr >= kMmapBottom && fits_below(addr, len, kMmapTop) && !overlaps(addr, addr + len)) {
    start = addr;
  } else {
    start = find_free(len);
    if (!start) return -ENOMEM;
  }
  if (!map_fixed(start, start + len, prot, flags)) {
    release(start, start + len);
    carve(start, start + len);
    return -ENOMEM;
  }
  return static_cast<int64_t>(start);
}

int AddressSpace::unmap(uint64_t addr, uint64_t len) {
  // Linux: EINVAL for an unaligned start, a zero length and anything past the
  // user address space; a huge range that holds few mappings is fine.
  if ((addr & (kPageSize - 1)) || len == 0 || !fits_below(addr, len, kUserTop)) return -EINVAL;
  uint64_t end = addr + page_up(len);  // kUserTop is page-aligned: no wrap
  release(addr, end);
  carve(addr, end);
  return 0;
}

int AddressSpace::protect(uint64_t addr, uint64_t len, int prot) {
  if (addr & (kPageSize - 1)) return -EINVAL;
  if (len == 0) return 0;
  if (!rounds_up(len) || !fits_below(addr, page_up(len), kUserTop)) return -ENOMEM;
  uint64_t end = addr + page_up(len);
  // Every page must be mapped (Linux returns ENOMEM otherwise).
  for (uint64_t a = addr; a < end;) {
    auto it = vmas_.upper_bound(a);
    if (it == vmas_.begin()) return -ENOMEM;
    --it;
    if (it->second.end <= a) return -ENOMEM;
    a = it->second.end;
  }
  std::vector<Vma> pieces;
  for (auto it = std::prev(vmas_.upper_bound(addr)); it != vmas_.end() && it->first < end; ++it) {
    Vma v = it->second;
    v.start = std::max(v.start, addr);
    v.end = std::min(v.end, end);
    v.prot = prot;
    pieces.push_back(v);
  }
  carve(addr, end);
  for (const Vma& v : pieces) insert(v);
  mark_changed();
  return populate(addr, end, prot) ? 0 : -ENOMEM;
}

int64_t AddressSpace::remap(uint64_t old_addr, uint64_t old_len, uint64_t new_len, int flags, uint64_t new_addr) {
  if ((old_addr & (kPageSize - 1)) || new_len == 0) return -EINVAL;
  if (flags & ~(MREMAP_MAYMOVE | MREMAP_FIXED)) return -EINVAL;
  if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE)) return -EINVAL;
  if (!rounds_up(old_len) || !rounds_up(new_len)) return -EINVAL;
  old_len = page_up(old_len);
  new_len = page_up(new_len);
  if (new_len > max_length()) return -ENOMEM;  // before the page-by-page moves
  auto it = vmas_.upper_bound(old_addr);
  if (it == vmas_.begin()) return -EFAULT;
  --it;
  Vma v = it->second;
  if (old_len == 0 || old_addr >= v.end || old_len > v.end - old_addr) return -EFAULT;
  if (flags & MREMAP_FIXED) {  // Linux: EINVAL outside user space or overlapping the old range
    if ((new_addr & (kPageSize - 1)) || new_addr < kMmapBottom || !fits_below(new_addr, new_len, kUserTop))
      return -EINVAL;
    if (new_addr < old_addr + old_len && old_addr < new_addr + new_len) return -EINVAL;
  }
  if (new_len <= old_len && !(flags & MREMAP_FIXED)) {
    unmap(old_addr + new_len, old_len - new_len);
    return static_cast<int64_t>(old_addr);
  }
  uint64_t grow_end = old_addr + new_len;
  if (!(flags & MREMAP_FIXED) && !overlaps(old_addr + old_len, grow_end) && grow_end <= kMmapTop) {
    if (!map_fixed(old_addr + old_len, grow_end, v.prot, v.flags)) {
      unmap(old_addr + old_len, new_len - old_len);  // the guest keeps the old size
      return -ENOMEM;
    }
    return static_cast<int64_t>(old_addr);
  }
  if (!(flags & MREMAP_MAYMOVE)) return -ENOMEM;
  uint64_t dest;
  if (flags & MREMAP_FIXED) {
    release(new_addr, new_addr + new_len);
    carve(new_addr, new_addr + new_len);
    dest = new_addr;
  } else {
    dest = find_free(new_len);
    if (!dest) return -ENOMEM;
  }
  // Move the frames, not the bytes: re-point the entries.
  uint64_t move = std::min(old_len, new_len);
  std::vector<uint64_t> moved;  // the guest must not reach them at the old address
  for (uint64_t off = 0; off < move; off += kPageSize) {
    uint64_t* from = pt_.leaf(old_addr + off, false);
    uint64_t value = from ? *from : 0;
    if (from) pt_.set_leaf(from, 0);
    if (value & kPteBacked) moved.push_back(value & kPteFrame);
    uint64_t* to = pt_.leaf(dest + off, true);
    if (!to) return -ENOMEM;
    pt_.set_leaf(to, value);
  }
  if (!moved.empty()) mem_.forget_guest_mappings(moved);
  carve(old_addr, old_addr + old_len);
  insert({dest, dest + move, v.prot, v.flags});
  mark_changed();
  if (new_len > move && !map_fixed(dest + move, dest + new_len, v.prot, v.flags)) return -ENOMEM;
  if (old_len > move) unmap(old_addr + move, old_len - move);
  return static_cast<int64_t>(dest);
}

int64_t AddressSpace::brk(uint64_t want) {
  // Refusals return the current break, like Linux. Beyond user space
  // page_up would wrap (brk(-1) used to unmap everything below the break).
  if (want < brk_start_ || want > kUserTop) return static_cast<int64_t>(brk_cur_);
  uint64_t old_top = page_up(brk_cur_), new_top = page_up(want);
  if (new_top > old_top) {
    if (new_top - old_top > max_length() || overlaps(old_top, new_top)) return static_cast<int64_t>(brk_cur_);
    if (!map_fixed(old_top, new_top, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS)) {
      unmap(old_top, new_top - old_top);
      return static_cast<int64_t>(brk_cur_);
    }
  } else if (new_top < old_top) {
    unmap(new_top, old_top - new_top);
  }
  brk_cur_ = want;
  return static_cast<int64_t>(brk_cur_);
}

bool AddressSpace::shared_anonymous(uint64_t va) const {
  auto it = vmas_.upper_bound(va);
  if (it == vmas_.begin()) return false;
  --it;
  const Vma& v = it->second;
  return va >= v.start && va < v.end && (v.flags & MAP_ANONYMOUS) && (v.flags & MAP_TYPE) == MAP_SHARED;
}

int AddressSpace::discard(uint64_t addr, uint64_t len) {
  if (addr & (kPageSize - 1)) return -EINVAL;
  if (!rounds_up(len) || addr + page_up(len) < addr) return -EINVAL;
  uint64_t end = addr + page_up(len);
  // Only mapped pages can hold data: walk the VMAs, not the whole range.
  std::vector<iovec> iov;
  auto it = vmas_.upper_bound(addr);
  if (it != vmas_.begin()) --it;
  for (; it != vmas_.end() && it->first < end; ++it) {
    // Shared memory keeps its contents (Linux refaults the shared page).
    if ((it->second.flags & MAP_ANONYMOUS) && (it->second.flags & MAP_TYPE) == MAP_SHARED) continue;
    uint64_t from = std::max(it->second.start, addr), to = std::min(it->second.end, end);
    for (uint64_t va = from; va < to; va += kPageSize) {
      if (!gather(va, kPageSize, true, iov)) continue;  // unbacked or read-only
      std::memset(iov[0].iov_base, 0, kPageSize);
      note_written(iov, kPageSize);
    }
  }
  return 0;
}

bool AddressSpace::gather(uint64_t va, uint64_t len, bool write, std::vector<iovec>& iov) {
  iov.clear();
  while (len > 0) {
    uint64_t gpa = pt_.translate(va, write);
    if (gpa == ~0ull) return false;
    uint64_t chunk = std::min(len, kPageSize - (va & (kPageSize - 1)));
    uint8_t* h = mem_.host(gpa);
    if (!iov.empty() && static_cast<uint8_t*>(iov.back().iov_base) + iov.back().iov_len == h)
      iov.back().iov_len += chunk;
    else
      iov.push_back({h, chunk});
    va += chunk;
    len -= chunk;
  }
  return true;
}

bool AddressSpace::copy_in(void* dst, uint64_t va, uint64_t len) {
  auto* d = static_cast<uint8_t*>(dst);
  while (len > 0) {
    uint64_t gpa = pt_.translate(va, false);
    if (gpa == ~0ull) return false;
    uint64_t chunk = std::min(len, kPageSize - (va & (kPageSize - 1)));
    std::memcpy(d, mem_.host(gpa), chunk);
    d += chunk;
    va += chunk;
    len -= chunk;
  }
  return true;
}

bool AddressSpace::copy_out(uint64_t va, const void* src, uint64_t len) {
  auto* s = static_cast<const uint8_t*>(src);
  while (len > 0) {
    uint64_t gpa = pt_.translate(va, true);
    if (gpa == ~0ull) return false;
    uint64_t chunk = std::min(len, kPageSize - (va & (kPageSize - 1)));
    mem_.write(gpa, s, chunk);
    s += chunk;
    va += chunk;
    len -= chunk;
  }
  return true;
}

int AddressSpace::read_string(uint64_t va, std::string& out, size_t max) {
  out.clear();
  while (out.size() < max) {
    uint64_t gpa = pt_.translate(va, false);
    if (gpa == ~0ull) return -EFAULT;
    uint64_t chunk = kPageSize - (va & (kPageSize - 1));
    const char* p = reinterpret_cast<const char*>(mem_.host(gpa));
    const void* nul = std::memchr(p, 0, chunk);
    if (nul) {
      out.append(p, static_cast<const char*>(nul) - p);
      return out.size() < max ? 0 : -ENAMETOOLONG;
    }
    out.append(p, chunk);
    va += chunk;
  }
  return -ENAMETOOLONG;
}

void AddressSpace::note_written(const std::vector<iovec>& iov, uint64_t bytes) {
  for (const iovec& v : iov) {
    if (bytes == 0) break;
    uint64_t n = std::min<uint64_t>(bytes, v.iov_len);
    mem_.note_write(static_cast<uint8_t*>(v.iov_base) - mem_.base(), n);
    bytes -= n;
  }
}

}  // namespace vmha
