// VmmWriteLog: pages of guest memory written by the VMM itself (syscall
// results, page tables, loaded ELF bytes). KVM's dirty log only sees writes
// made by the guest, so these would be lost on failover without this log.
// Lock-free: the vCPU thread notes writes while a harvester thread drains.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace vmha {

class VmmWriteLog {
 public:
  explicit VmmWriteLog(uint64_t guest_bytes);
  // Marks every page touched by [gpa, gpa + len) as written.
  void note(uint64_t gpa, uint64_t len);
  // Appends the page frame numbers written since the last drain, clearing them.
  void drain(std::vector<uint64_t>& pfns);
  // Pages noted since the process VM started (a counter, for benchmarks).
  uint64_t total_noted() const { return total_.load(std::memory_order_relaxed); }
  // Pages noted and not drained yet.
  uint64_t pending() const { return pending_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> words_;
  uint64_t nwords_;
  std::atomic<uint64_t> total_{0};
  std::atomic<uint64_t> pending_{0};
};

}  // namespace vmha
