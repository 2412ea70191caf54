#include "vmha/track/vmm_write_log.h"

#include "vmha/common/x86.h"

namespace vmha {

VmmWriteLog::VmmWriteLog(uint64_t guest_bytes)
    : words_(new std::atomic<uint64_t>[(guest_bytes / x86::kPageSize + 63) / 64]()),
      nwords_((guest_bytes / x86::kPageSize + 63) / 64) {}

void VmmWriteLog::note(uint64_t gpa, uint64_t len) {
  if (len == 0) return;
  uint64_t first = gpa / x86::kPageSize, last = (gpa + len - 1) / x86::kPageSize;
  for (uint64_t p = first; p <= last && p / 64 < nwords_; ++p) {
    uint64_t bit = 1ull << (p % 64);
    if (!(words_[p / 64].fetch_or(bit, std::memory_order_relaxed) & bit)) {
      total_.fetch_add(1, std::memory_order_relaxed);
      pending_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void VmmWriteLog::drain(std::vector<uint64_t>& pfns) {
  for (uint64_t w = 0; w < nwords_; ++w) {
    if (words_[w].load(std::memory_order_relaxed) == 0) continue;
    uint64_t bits = words_[w].exchange(0, std::memory_order_acq_rel);
    pending_.fetch_sub(static_cast<uint64_t>(__builtin_popcountll(bits)), std::memory_order_relaxed);
    while (bits) {
      int b = __builtin_ctzll(bits);
      pfns.push_back(w * 64 + b);
      bits &= bits - 1;
    }
  }
}

}  // namespace vmha
