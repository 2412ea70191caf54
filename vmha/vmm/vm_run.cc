// The KVM_RUN loop: system calls and exceptions arrive as `out` instructions
// from the stubs (KVM_EXIT_IO); everything else is an error or a pause.
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>

#include "vmha/sys/syscall_table.h"
#include "vmha/sys/threads.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal";
  }
}

namespace {
// How often wait_paused() repeats its kick while the vCPU has not parked.
constexpr std::chrono::milliseconds kPauseRekick{5};

RunResult failed(const std::string& why) { return {RunResult::End::kFailed, 0, why}; }

std::string hex(uint64_t v) {
  char b[24];
  snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}
}  // namespace

void Vm::request_pause() {
  pause_requested_.store(true);
  run_->immediate_exit = 1;
  if (running_.load()) pthread_kill(vcpu_thread_, SIGRTMIN + 5);
}

void Vm::request_stop() {
  stop_requested_.store(true);
  run_->immediate_exit = 1;
  if (running_.load()) pthread_kill(vcpu_thread_, SIGRTMIN + 5);
}

void Vm::wait_paused() {
  std::unique_lock<std::mutex> lock(mu_);
  // The kick can land while the vCPU thread serves a system call, after the
  // call looked for a pause and before it blocks (a read of an empty pipe,
  // a poll, a sleep): the no-op handler runs, the call then blocks and the
  // pause would wait for the call to end, for ever on a pipe nobody writes.
  // Kick again until the thread parks; a call cut by a kick restarts after
  // the pause (kWaitForRelease), so extra kicks change nothing else.
  while (!cv_.wait_for(lock, kPauseRekick, [&] { return parked_ || finished_; }))
    if (running_.load() && (pause_requested_.load() || stop_requested_.load()))
      pthread_kill(vcpu_thread_, SIGRTMIN + 5);
}

void Vm::resume() {
  std::lock_guard<std::mutex> lock(mu_);
  run_->immediate_exit = 0;
  pause_requested_.store(false);
  cv_.notify_all();
}

void Vm::park() {
  std::unique_lock<std::mutex> lock(mu_);
  parked_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return !pause_requested_.load(); });
  parked_ = false;
  run_->immediate_exit = 0;
}

Status Vm::apply_vmm_changes() {
  const bool fs = std::exchange(proc_->fs_base_changed, false);
  // Loading a copy of the top-level table is what drops this KVM's shadow TLB.
  const bool flush = as_->take_flush();
  if (fs && !sync_sregs_) {
    const std::pair<uint32_t, uint64_t> msr[] = {{kMsrFsBase, proc_->fs_base}};
    if (Status s = set_msrs(msr); !s.ok()) return s;
  }
  if (!flush && !(fs && sync_sregs_)) return Status();
  // One update of the segment registers: the FS base is FS's, CR3 theirs too.
  kvm_sregs sregs;
  if (Status s = get_sregs(&sregs); !s.ok()) return s;
  if (fs) sregs.fs.base = proc_->fs_base;
  if (flush) {
    sregs.cr3 = pt_->flush_root();
    as_->set_loaded_generation(as_->generation());
  }
  return set_sregs(sregs);
}

Status Vm::flush_sync_regs() {
  if (sync_regs_ && (run_->kvm_dirty_regs & KVM_SYNC_X86_REGS)) {
    if (ioctl(vcpu_fd_, KVM_SET_REGS, &run_->s.regs.regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));
    run_->kvm_dirty_regs &= ~KVM_SYNC_X86_REGS;
  }
  if (sync_sregs_ && (run_->kvm_dirty_regs & KVM_SYNC_X86_SREGS)) {
    if (ioctl(vcpu_fd_, KVM_SET_SREGS, &run_->s.regs.sregs) < 0) return Status::error(errno_text("KVM_SET_SREGS"));
    run_->kvm_dirty_regs &= ~KVM_SYNC_X86_SREGS;
  }
  return Status();
}

Status Vm::get_regs(kvm_regs* out) {
  if (sync_regs_ && regs_current_) {
    *out = run_->s.regs.regs;
    return Status();
  }
  if (Status s = flush_sync_regs(); !s.ok()) return s;
  if (ioctl(vcpu_fd_, KVM_GET_REGS, out) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  return Status();
}

Status Vm::set_regs(const kvm_regs& r) {
  if (sync_regs_ && regs_current_) {
    run_->s.regs.regs = r;
    run_->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
    return Status();
  }
  if (ioctl(vcpu_fd_, KVM_SET_REGS, &r) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  return Status();
}

Status Vm::get_sregs(kvm_sregs* out) {
  if (sync_sregs_ && sregs_current_) {
    *out = run_->s.regs.sregs;
    return Status();
  }
  if (Status s = flush_sync_regs(); !s.ok()) return s;
  if (ioctl(vcpu_fd_, KVM_GET_SREGS, out) < 0) return Status::error(errno_text("KVM_GET_SREGS"));
  return Status();
}

Status Vm::set_sregs(const kvm_sregs& s) {
  if (sync_sregs_ && sregs_current_) {
    run_->s.regs.sregs = s;
    run_->kvm_dirty_regs |= KVM_SYNC_X86_SREGS;
    return Status();
  }
  if (ioctl(vcpu_fd_, KVM_SET_SREGS, &s) < 0) return Status::error(errno_text("KVM_SET_SREGS"));
  return Status();
}

Status Vm::handle_syscall(RunResult* end) {
  kvm_regs local;
  if (!sync_regs_ && ioctl(vcpu_fd_, KVM_GET_REGS, &local) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  kvm_regs& r = sync_regs_ ? run_->s.regs.regs : local;
  if (r.rip != kSyscallStubVa + 2) {
    proc_->die_by_signal(SIGSEGV);
    end->message = "guest wrote to the VMM's I/O port at " + hex(r.rip);
    return Status();
  }
  if (!cpl_checked_) {
    // Real VMX hosts enter the stub at CPL0; this host stays at CPL3.
    kvm_sregs sregs;
    if (Status s = get_sregs(&sregs); !s.ok()) return s;
    syscall_enters_cpl0_ = sregs.cs.dpl != 3;
    cpl_checked_ = true;
  }
  SyscallArgs args{r.rax, {r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9}};
  last_nr_ = r.rax;
  proc_->signals.syscall_sp = r.rsp;
  const bool sigreturn_call = r.rax == SYS_rt_sigreturn;  // sets every register: served here
  int64_t ret = sigreturn_call ? 0 : dispatch_syscall(*proc_, args);
  bool new_image = false;
  if (proc_->exec) {  // execve: a new image, or the call fails
    ret = exec_image(r);
    new_image = ret == 0;
  }
  if (ret == kRetryLater) {
    ret = kWaitForRelease;
    yield_ = true;
  }
  restart_ = ret == kWaitForRelease;
  const bool switch_out = ret == kSwitchThread;
  if (new_image) {
    ++syscalls_;
  } else if (sigreturn_call) {
    ++syscalls_;
    if (!sigreturn(r)) {
      proc_->die_by_signal(SIGSEGV);
      end->message = "SIGSEGV: rt_sigreturn found no valid signal frame at rsp " + hex(r.rsp - 8);
      return Status();
    }
  } else if (restart_) {
    // The call waits for held output: back to the syscall instruction with
    // rax = its number again, so the guest state is "before the call" (a
    // checkpoint taken meanwhile re-executes it too).
    r.rip = r.rcx - 2;  // `syscall` is 2 bytes
  } else if (switch_out) {
    // The thread blocked, yielded or exited: past the call, its answer goes
    // into rax when it runs again (schedule()).
    ++syscalls_;
    r.rip = r.rcx;
  } else {
    ++syscalls_;
    r.rax = static_cast<uint64_t>(ret);
    r.rip = r.rcx;
  }
  if (!sigreturn_call && !new_image) r.rflags = (r.r11 & kSysretRflagsMask) | kRflagsFixed;  // what SYSRET would load
  if (auto birth = proc_->threads.take_birth())
    if (Status s = thread_born(r, {proc_->pid, birth->tid}, birth->stack); !s.ok()) return s;
  if (auto birth = tree_->take_birth())
    if (Status s = thread_born(r, {birth->pid, 0}, birth->stack); !s.ok()) return s;
  if (sync_regs_)
    run_->kvm_dirty_regs |= KVM_SYNC_X86_REGS;
  else if (ioctl(vcpu_fd_, KVM_SET_REGS, &r) < 0)
    return Status::error(errno_text("KVM_SET_REGS"));
  if (syscall_enters_cpl0_) {
    kvm_sregs sregs;
    if (Status s = get_sregs(&sregs); !s.ok()) return s;
    sregs.cs = user_segment(kUserCs, true);
    sregs.ss = user_segment(kUserDs, false);
    if (Status s = set_sregs(sregs); !s.ok()) return s;
  }
  return apply_vmm_changes();
}

void Vm::handle_exception(RunResult* end) {
  kvm_regs r{};
  kvm_sregs sregs{};
  (void)get_regs(&r);
  (void)get_sregs(&sregs);
  ExceptionFrame frame;
  (void)read_exception_frame(*mem_, tables_, r.rsp, kKernelStackVa, kKernelStackTop, &frame);
  int vector = static_cast<int>(frame.vector);
  uint64_t err = frame.error, rip = frame.rip;
  int sig;
  std::string what;
  switch (vector) {
    case 0:
      sig = SIGFPE;
      what = "divide error";
      break;
    case 1:
    case 3:
      sig = SIGTRAP;
      what = "breakpoint";
      break;
    case 6:
      sig = SIGILL;
      what = "invalid opcode";
      break;
    case 13:
      sig = SIGSEGV;
      what = "general protection fault";
      break;
    case 14:
      sig = SIGSEGV;
      what = "page fault at " + hex(sregs.cr2) + ((err & 2) ? " (write" : " (read") +
             ((err & 1) ? ", protection)" : ", not mapped)");
      break;
    case 16:
    case 19:
      sig = SIGFPE;
      what = "floating-point exception";
      break;
    case 17:
      sig = SIGBUS;
      what = "alignment check";
      break;
    default:
      sig = SIGSEGV;
      what = "exception " + std::to_string(vector);
      break;
  }
  proc_->die_by_signal(sig);
  end->message = std::string(signal_name(sig)) + ": " + what + " at rip " + hex(rip);
}

// An exception from the loop (a bug, or memory the host refused) ends the
// run as failed: escaping the vCPU thread would terminate the whole process
// (SIGABRT), which a replicating caller cannot tell from a kill.
RunResult Vm::run() {
  try {
    return run_loop();
  } catch (const std::exception& e) {
    return finish_after_exception(e.what());
  } catch (...) {
    return finish_after_exception("unknown exception");
  }
}

RunResult Vm::finish_after_exception(const char* what) {
  kick_.stop();
  running_.store(false);
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }
  return failed(std::string("internal error in the vCPU thread: ") + what);
}

RunResult Vm::run_loop() {
  vcpu_thread_ = pthread_self();
  {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = false;
  }
  running_.store(true);
  RunResult result;
  auto finish = [&](RunResult r) {
    kick_.stop();
    running_.store(false);
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
      cv_.notify_all();
    }
    return r;
  };
  if (Status s = start_signals(); !s.ok()) return finish(failed(s.message()));
  if (Status s = prepare_helpers(); !s.ok()) return finish(failed(s.message()));
  for (;;) {
    // A pause asked for after this sets it again.
    if (kick_.take_kicked() | helper_woke_.exchange(false)) run_->immediate_exit = 0;
    if (pause_requested_.load()) park();
    if (stop_requested_.exchange(false)) {
      run_->immediate_exit = 0;
      result.end = RunResult::End::kStopped;
      return finish(result);
    }
    bool idle = false;
    if (Status s = schedule(&idle); !s.ok()) return finish(failed(s.message()));
    if (idle) {  // every thread waits: pauses and stops park at the loop's top
      wait_idle();
      continue;
    }
    if (Status s = deliver_signals(&result); !s.ok()) return finish(failed(s.message()));
    if (proc_->exit.requested && proc_ != &tree_->root()) {
      end_process();
      continue;
    }
    if (proc_->exit.requested) {  // a signal's default action
      result.end = proc_->exit.by_signal ? RunResult::End::kSignaled : RunResult::End::kExited;
      result.code = proc_->exit.code;
      return finish(result);
    }
    if (Status s = dispatch_helpers(); !s.ok()) return finish(failed(s.message()));
    const int rc = ioctl(vcpu_fd_, KVM_RUN, 0);
    const int run_errno = errno;
    regs_current_ = sync_regs_;  // stored by KVM_RUN on every return
    sregs_current_ = sync_sregs_;
    // The helpers stop whenever vCPU 0 stops: what follows sees one vCPU.
    if (Status s = recall_helpers(); !s.ok()) return finish(failed(s.message()));
    if (rc < 0) {
      if (run_errno == EINTR || run_errno == EAGAIN) continue;
      errno = run_errno;
      return finish(failed(errno_text("KVM_RUN")));
    }
    switch (run_->exit_reason) {
      case KVM_EXIT_IO: {
        uint16_t port = run_->io.port;
        if (port == kSyscallPort && run_->io.direction == KVM_EXIT_IO_OUT) {
          if (Status s = handle_syscall(&result); !s.ok()) return finish(failed(s.message()));
          if (restart_) {
            // Not inside the call any more: pauses park at the loop's top. A
            // call that gave the vCPU up (kRetryLater) waits for nothing.
            if (!yield_ && !pause_requested_.load() && !stop_requested_.load())
              proc_->out->wait_for_release(std::chrono::microseconds(200));
            break;
          }
          if (proc_->exit.requested && proc_ != &tree_->root()) {
            end_process();  // a child: a zombie for its parent; the others go on
            break;
          }
          if (proc_->exit.requested) {
            const GuestExit& e = proc_->exit;
            result.end = e.by_signal ? RunResult::End::kSignaled : RunResult::End::kExited;
            result.code = e.code;
            return finish(result);
          }
          if (hook_ && hook_(*this, last_nr_, syscalls_) == HookAction::kStop) {
            result.end = RunResult::End::kStopped;
            return finish(result);
          }
        } else if (port == kExceptionPort) {
          handle_exception(&result);
          if (proc_ != &tree_->root()) {
            end_process();
            break;
          }
          result.end = RunResult::End::kSignaled;
          result.code = proc_->exit.code;
          return finish(result);
        } else {
          return finish(failed("guest used I/O port " + hex(port)));
        }
        break;
      }
      case KVM_EXIT_DIRTY_RING_FULL:
        if (Status s = tracker_->on_ring_full(); !s.ok()) return finish(failed(s.message()));
        break;
      case KVM_EXIT_INTR:
        break;
      case KVM_EXIT_HLT:
        return finish(failed("guest halted (hlt)"));
      case KVM_EXIT_SHUTDOWN:
        return finish(failed("guest triple fault (KVM_EXIT_SHUTDOWN)"));
      case KVM_EXIT_FAIL_ENTRY:
        return finish(
            failed("KVM entry failed, hardware reason " + hex(run_->fail_entry.hardware_entry_failure_reason)));
      case KVM_EXIT_INTERNAL_ERROR:
        return finish(failed("KVM internal error, suberror " + std::to_string(run_->internal.suberror)));
      default:
        return finish(failed("unexpected KVM exit " + std::to_string(run_->exit_reason)));
    }
  }
}

}  // namespace vmha
