// The memory section of the VM state: the frame allocator (bump pointer and
// free list), then every allocated frame that is not all zeros. A restored
// VM starts with zeroed memory, so zero frames need not travel.
#include <cstring>
#include <vector>

#include "vmha/state/vm_state_codec.h"
#include "vmha/vmm/layout.h"

namespace vmha {

using namespace layout;

namespace {

// Allocated, non-free frames with any non-zero byte, in address order.
std::vector<uint64_t> nonzero_frames(GuestMemory& mem) {
  std::vector<bool> is_free(mem.bump() / kPageSize);
  for (uint64_t f : mem.free_list()) is_free[f / kPageSize] = true;
  static const uint8_t zero[kPageSize] = {};
  std::vector<uint64_t> frames;
  for (uint64_t gpa = kPageSize; gpa < mem.bump(); gpa += kPageSize)
    if (!is_free[gpa / kPageSize] && std::memcmp(mem.host(gpa), zero, kPageSize) != 0) frames.push_back(gpa);
  return frames;
}

}  // namespace

void VmStateCodec::encode_memory(ByteWriter& w, const Vm& vm, bool with_frames) {
  GuestMemory& mem = *vm.mem_;
  w.u64(mem.bump());
  w.u32(static_cast<uint32_t>(mem.free_list().size()));
  for (uint64_t f : mem.free_list()) w.u64(f);
  std::vector<uint64_t> frames;
  if (with_frames) frames = nonzero_frames(mem);
  w.u64(frames.size());
  for (uint64_t gpa : frames) {
    w.u64(gpa);
    w.bytes(mem.host(gpa), kPageSize);
  }
}

void VmStateCodec::decode_memory(ByteReader& r, Vm& vm) {
  uint64_t size = vm.mem_->size();
  uint64_t bump = r.u64("allocator bump");
  uint32_t nfree = r.u32("free frame count");
  if (r.ok() && (bump > size || bump % kPageSize || nfree > bump / kPageSize))
    r.fail("allocator", "a state inside guest memory");
  std::vector<uint64_t> free_list;
  for (uint32_t i = 0; i < nfree && r.ok(); ++i) {
    uint64_t f = r.u64("free frame");
    if (r.ok() && !frame_inside(vm, f)) r.fail("free frame", "a frame inside guest memory");
    free_list.push_back(f);
  }
  vm.mem_->set_allocator(bump, std::move(free_list));
  uint64_t pages = r.u64("frame count");
  if (r.ok() && pages > size / kPageSize) r.fail("frame count", "at most the guest's frames");
  for (uint64_t i = 0; i < pages && r.ok(); ++i) {
    uint64_t gpa = r.u64("frame address");
    const uint8_t* data = r.view(kPageSize, "frame bytes");
    if (!r.ok()) break;
    if (!frame_inside(vm, gpa) || gpa >= bump) {
      r.fail("frame address", "an allocated frame");
      break;
    }
    vm.mem_->write(gpa, data, kPageSize);
  }
}

}  // namespace vmha
