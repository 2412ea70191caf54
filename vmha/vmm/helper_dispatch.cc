// Helper vCPUs (helper_vcpus.h says why they only run while vCPU 0 runs):
// which threads go onto them before vCPU 0 enters KVM_RUN, and how they
// come back when it leaves. A thread goes onto a helper only when it needs
// nothing from the VMM first (runnable, not inside or before a call it runs
// again, no signal it could take now); it comes back with its registers,
// and one that stopped at a system call or an exception is put back before
// the `out` or the faulting instruction and waits to run it on vCPU 0.
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cstring>

#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

static_assert(kMaxVcpus * kHelperTssStride <= kPageSize, "helper TSS copies fit in the TSS page");
static_assert(kMaxVcpus * kHelperStackSlot <= kKernelStackTop - kKernelStackVa, "helper stacks fit");

Status Vm::create_helpers() {
  int want = opts_.vcpus;
  if (want == 0) {  // one per CPU this process may run on
    cpu_set_t set;
    want = sched_getaffinity(0, sizeof set, &set) == 0 ? std::min(CPU_COUNT(&set), kMaxVcpus) : 1;
  }
  if (want <= 1) return Status();
  helpers_ = std::make_unique<HelperVcpus>(*tracker_, [this] {
    helper_woke_.store(true);
    __atomic_store_n(&run_->immediate_exit, 1, __ATOMIC_RELEASE);
    if (running_.load()) pthread_kill(vcpu_thread_, SIGRTMIN + 5);
  });
  for (int id = 1; id < want; ++id) {
    Status s = helpers_->add(kvm_fd_, vm_fd_, id, [this](int fd) { return setup_cpuid(fd); });
    if (!s.ok()) {
      if (opts_.vcpus > 0) return s;  // asked for: an error; by default: fewer vCPUs
      break;
    }
  }
  if (helpers_->size() == 0) helpers_.reset();
  helper_loads_.assign(helpers_ ? helpers_->size() : 0, HelperLoad{});
  return Status();
}

// At the start of run(): each helper's TSS copy (in guest memory, so a
// restored or a backup's image gets them again here) and its registers that
// never change: segments, descriptor tables, control registers, MSRs.
Status Vm::prepare_helpers() {
  if (!helpers_) return Status();
  kvm_sregs base;
  if (Status s = get_sregs(&base); !s.ok()) return s;
  const uint64_t tss_gpa = tables_.first_frame + (kTssVa - kKernelBase);
  uint8_t tss[kHelperTssStride];
  std::memcpy(tss, mem_->host(tss_gpa), sizeof tss);
  helper_sregs_.assign(helpers_->size(), base);
  for (size_t k = 0; k < helpers_->size(); ++k) {
    const uint64_t id = k + 1;
    uint64_t rsp0 = kKernelStackTop - id * kHelperStackSlot;
    std::memcpy(tss + kTssRsp0Offset, &rsp0, sizeof rsp0);
    mem_->write(tss_gpa + id * kHelperTssStride, tss, sizeof tss);
    kvm_sregs& s = helper_sregs_[k];
    s.tr.base = kTssVa + id * kHelperTssStride;
    // User segments, as vCPU 0 has them between two system calls.
    s.cs = user_segment(kUserCs, true);
    s.ss = user_segment(kUserDs, false);
    if (Status st = set_syscall_msrs(helpers_->fd(k)); !st.ok()) return st;
    helper_loads_[k] = HelperLoad{};
  }
  return Status();
}

std::optional<std::pair<Process*, size_t>> Vm::take_want_main() {
  while (!want_main_.empty()) {
    ThreadKey key = want_main_.front();
    want_main_.pop_front();
    for (const auto& q : tree_->all()) {
      if (q->pid != key.first || q->zombie || q->exit.requested) continue;
      auto& all = q->threads.all();
      for (size_t i = 0; i < all.size(); ++i)
        if (all[i].tid == key.second && all[i].runnable()) return std::make_pair(q.get(), i);
    }
  }
  return std::nullopt;
}

Status Vm::dispatch_helpers() {
  if (!helpers_ || pause_requested_.load() || stop_requested_.load()) return Status();
  struct Candidate {
    Process* q;
    GuestThread* t;
  };
  std::vector<Candidate> ready;
  for (const auto& q : tree_->all()) {
    if (q->zombie || q->exit.requested || q->exec) continue;
    if (q.get() != proc_) continue;  // EXPERIMENT
    GuestThread& cur = q->threads.current();
    for (GuestThread& t : q->threads.all()) {
      if (q.get() == proc_ && &t == &cur) continue;  // on vCPU 0
      if (!t.runnable() || t.in_call || t.restart || t.call_deadline) continue;
      const uint64_t mask = &t == &cur ? q->sigmask : t.sigmask;
      if (q->signals.pending && q->signals.deliverable(mask, q->sigactions)) continue;
      ThreadKey key{q->pid, t.tid};
      if (std::find(want_main_.begin(), want_main_.end(), key) != want_main_.end()) continue;
      if (!thread_cpus_.count(key)) continue;
      ready.push_back({q.get(), &t});
    }
  }
  if (ready.empty()) return Status();
  // Round robin over the ready threads, so none keeps a helper for ever.
  const size_t n = std::min(ready.size(), helpers_->size());
  const size_t first = dispatch_cursor_ % ready.size();
  dispatch_cursor_ = first + n;
  for (size_t i = 0; i < n; ++i) {
    const Candidate& c = ready[(first + i) % ready.size()];
    const int fd = helpers_->fd(i);
    HelperLoad& load = helper_loads_[i];
    ThreadKey key{c.q->pid, c.t->tid};
    auto it = thread_cpus_.find(key);
    if (Status s = set_cpu(fd, it->second); !s.ok()) return s;
    // Tables changed since this helper loaded them (or another process):
    // a different copy of the root, which is what drops KVM's shadow TLB.
    AddressSpace* as = c.q->as;
    if (load.as != as || load.generation != as->generation()) {
      PageTable& pt = as->page_table();
      uint64_t cr3 = pt.flush_root();
      if (cr3 == load.cr3) cr3 = pt.flush_root();
      load.cr3 = cr3;
      load.as = as;
      load.generation = as->generation();
      load.sregs_loaded = false;
    }
    // Segments and tables go in again only when they may have changed: CR3
    // above, or a system call or an exception that took the helper to CPL0
    // (recall). Otherwise the FS base alone, when it is another thread's.
    const uint64_t fs = c.t == &c.q->threads.current() ? c.q->fs_base : c.t->fs_base;
    if (!load.sregs_loaded) {
      kvm_sregs s = helper_sregs_[i];
      s.cr3 = load.cr3;
      s.fs.base = fs;
      if (ioctl(fd, KVM_SET_SREGS, &s) < 0) return Status::error(errno_text("KVM_SET_SREGS"));
      load.sregs_loaded = true;
      load.fs = fs;
    } else if (fs != load.fs) {
      const std::pair<uint32_t, uint64_t> msr[] = {{kMsrFsBase, fs}};
      if (Status st = set_msrs(fd, msr); !st.ok()) return st;
      load.fs = fs;
    }
    thread_cpus_.erase(it);
    load.used = true;
    load.key = key;
    helpers_->start(i);
  }
  return Status();
}

Status Vm::recall_helpers() {
  if (!helpers_) return Status();
  bool any = false;
  for (const HelperLoad& l : helper_loads_) any = any || l.used;
  if (!any) return Status();
  helpers_->stop_all();
  Status result;
  for (size_t k = 0; k < helper_loads_.size(); ++k) {
    HelperLoad& load = helper_loads_[k];
    if (!load.used) continue;
    load.used = false;
    ThreadCpu c;
    if (Status s = get_cpu(helpers_->fd(k), &c); !s.ok()) return s;
    const HelperVcpus::Exit exit = helpers_->exit(k);
    // A system call, an exception or a failure may have left it at CPL0.
    if (exit != HelperVcpus::Exit::kNone && exit != HelperVcpus::Exit::kPreempted) load.sregs_loaded = false;
    switch (exit) {
      case HelperVcpus::Exit::kNone:
      case HelperVcpus::Exit::kPreempted:
        break;
      case HelperVcpus::Exit::kSyscall:
        // Back to the stub's `out` (rax still the call's number, rcx and
        // r11 as `syscall` left them): vCPU 0 takes the same exit.
        if (c.regs.rip != kSyscallStubVa) c.regs.rip -= 2;
        want_main_.push_back(load.key);
        break;
      case HelperVcpus::Exit::kException: {
        // The CPU's frame on this helper's stack: back to the faulting
        // instruction, which faults again on vCPU 0 (a breakpoint's trap
        // reports the next one: back over the int3).
        const uint64_t slot_top = kKernelStackTop - (k + 1) * kHelperStackSlot;
        ExceptionFrame f;
        if (read_exception_frame(*mem_, tables_, c.regs.rsp, slot_top - kHelperStackSlot, slot_top, &f)) {
          c.regs.rip = f.rip - (f.vector == 3 ? 1 : 0);
          c.regs.rflags = f.rflags;
          c.regs.rsp = f.rsp;
        } else {
          c.regs.rip -= 2;  // not the stub: vCPU 0 runs the `out` again and refuses it
        }
        want_main_.push_back(load.key);
        break;
      }
      case HelperVcpus::Exit::kFailed:
        if (result.ok()) result = Status::error("vCPU " + std::to_string(k + 1) + ": " + helpers_->why(k));
        break;
    }
    thread_cpus_[load.key] = std::move(c);
  }
  return result;
}

}  // namespace vmha
