#include "vmha/vmm/guest_memory.h"

#include <sys/mman.h>

#include <memory>

namespace vmha {

Status GuestMemory::create(uint64_t bytes, std::unique_ptr<GuestMemory>* out) {
  bytes = (bytes + (2u << 20) - 1) & ~uint64_t((2u << 20) - 1);
  // NORESERVE: frames the guest never touches cost no host memory.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return Status::error(errno_text("mmap of guest memory"));
  out->reset(new GuestMemory(static_cast<uint8_t*>(p), bytes));
  return Status();
}

Status GuestMemory::create_at(uint8_t* base, uint64_t bytes, std::unique_ptr<GuestMemory>* out) {
  if (!base || bytes == 0 || bytes % (2u << 20) || reinterpret_cast<uintptr_t>(base) % 4096)
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
    if (next_ + 4096 > size_) return 0;
    gpa = next_;
    next_ += 4096;
  }
  // Freed frames were zeroed by free_frame; a fresh frame is zero already.
  // Logged either way: the backup must learn the frame's content is now zero.
  log_.note(gpa, 4096);
  return gpa;
}

void GuestMemory::free_frame(uint64_t gpa) {
  if (external_)
    std::memset(base_ + gpa, 0, 4096);  // shared memory: MADV_DONTNEED would not zero it
  else
    madvise(base_ + gpa, 4096, MADV_DONTNEED);  // zero, and give the RAM back
  log_.note(gpa, 4096);
  free_.push_back(gpa);
}

void GuestMemory::set_allocator(uint64_t bump, std::vector<uint64_t> free_list) {
  next_ = bump;
  free_ = std::move(free_list);
}

}  // namespace vmha
