#include "vmha/mem/guest_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <memory>

namespace vmha {

Status GuestMemory::create(uint64_t bytes, std::unique_ptr<GuestMemory>* out) {
  bytes = (bytes + x86::kLargePageSize - 1) & ~(x86::kLargePageSize - 1);
  // NORESERVE: frames the guest never touches cost no host memory.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status::error(errno_text("mmap of guest memory"));
  out->reset(new GuestMemory(static_cast<uint8_t*>(p), bytes));
  return Status();
}

Status GuestMemory::create_at(uint8_t* base, uint64_t bytes, std::unique_ptr<GuestMemory>* out) {
  if (!base || bytes == 0 || bytes % x86::kLargePageSize || reinterpret_cast<uintptr_t>(base) % x86::kPageSize)
    return Status::error("guest memory: caller memory must be page-aligned and a multiple of 2 MiB");
  out->reset(new GuestMemory(base, bytes));
  (*out)->external_ = true;
  return Status();
}

GuestMemory::~GuestMemory() {
  if (!external_) munmap(base_, size_);
}

uint64_t GuestMemory::alloc_frame() {
  uint64_t gpa;
  if (!free_.empty()) {
    gpa = free_.back();
    free_.pop_back();
  } else {
    if (next_ + x86::kPageSize > size_) return 0;
    gpa = next_;
    next_ += x86::kPageSize;
  }
  // Freed frames were zeroed by free_frame; a fresh frame is zero already.
  // Logged either way: the backup must learn the frame's content is now zero.
  log_.note(gpa, x86::kPageSize);
  return gpa;
}

namespace {
// Calls fn(gpa, bytes) for each run of adjacent frames in sorted `gpas`.
template <typename Fn>
void for_each_run(std::vector<uint64_t>& gpas, Fn fn) {
  std::sort(gpas.begin(), gpas.end());
  for (size_t i = 0; i < gpas.size();) {
    size_t j = i + 1;
    while (j < gpas.size() && gpas[j] == gpas[j - 1] + x86::kPageSize) ++j;
    fn(gpas[i], (j - i) * x86::kPageSize);
    i = j;
  }
}
}  // namespace

void GuestMemory::forget_guest_mappings(std::vector<uint64_t>& gpas) {
  // A protection change of the host pages is an MMU-notifier event: KVM
  // drops every shadow entry that maps them. The contents stay.
  for_each_run(gpas, [&](uint64_t gpa, uint64_t len) {
    mprotect(base_ + gpa, len, PROT_READ);
    mprotect(base_ + gpa, len, PROT_READ | PROT_WRITE);
  });
}

void GuestMemory::free_frames(std::vector<uint64_t>& gpas) {
  if (!extra_refs_.empty()) {
    // Still mapped by another process: one reference less, contents kept.
    std::vector<uint64_t> kept;
    std::erase_if(gpas, [&](uint64_t gpa) {
      auto it = extra_refs_.find(gpa);
      if (it == extra_refs_.end()) return false;
      if (--it->second == 0) extra_refs_.erase(it);
      kept.push_back(gpa);
      return true;
    });
    if (!kept.empty()) forget_guest_mappings(kept);
    if (gpas.empty()) return;
  }
  for_each_run(gpas, [&](uint64_t gpa, uint64_t len) {
    if (external_) {
      // Caller memory may be shared (MADV_DONTNEED would not zero it) or
      // registered for remote reads (the pages must stay where they are).
      std::memset(base_ + gpa, 0, len);
      mprotect(base_ + gpa, len, PROT_READ);
      mprotect(base_ + gpa, len, PROT_READ | PROT_WRITE);
    } else {
      madvise(base_ + gpa, len, MADV_DONTNEED);  // zero, give the RAM back, and an MMU-notifier event
    }
    log_.note(gpa, len);
  });
  free_.insert(free_.end(), gpas.begin(), gpas.end());
}

void GuestMemory::set_allocator(uint64_t bump, std::vector<uint64_t> free_list) {
  next_ = bump;
  free_ = std::move(free_list);
}

}  // namespace vmha
