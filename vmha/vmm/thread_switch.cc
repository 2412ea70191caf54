// Guest threads on the one vCPU (sys/threads.h says why): at each safe point
// of the run loop the VMM ends due waits, and when the running thread
// blocked, yielded, exited or used up its time slice, saves its registers and
// FPU state and loads the next runnable thread's (round robin). A thread
// sitting before a call it runs again (a blocking host call that the
// slice's kick cut short) is switched like any other: its restart flag and
// call deadline go with it. A thread that
// stopped inside a system call resumes with that call's answer in rax, or
// before the call when a signal cut its wait.
// With no thread runnable the vCPU thread sleeps (wait_idle) until a wait is
// due, a signal arrives, or an epoch pause or a stop asks for it: a pause
// then finds every thread either on the vCPU between two instructions or in
// a wait record, which a save carries and a restore resumes.
#include <signal.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <utility>

#include "vmha/sys/signal_kick.h"
#include "vmha/vmm/layout.h"
#include "vmha/vmm/vm.h"

namespace vmha {

using namespace layout;

namespace {

// How long a thread runs while another one is runnable.
constexpr int64_t kSliceNs = 10'000'000;

int64_t earliest(int64_t a, int64_t b) {
  if (a < 0) return b;
  if (b < 0) return a;
  return a < b ? a : b;
}

bool has_runnable_other(const ThreadTable& tt) {
  for (size_t i = 0; i < tt.all().size(); ++i)
    if (i != tt.current_index() && tt.all()[i].runnable()) return true;
  return false;
}

}  // namespace

int64_t Vm::next_kick_ns() {
  int64_t due = proc_->signals.next_due_ns();
  const ThreadTable& tt = proc_->threads;
  if (!tt.several()) return due;
  due = earliest(due, tt.next_due_ns());
  if (tt.current().runnable() && has_runnable_other(tt))
    due = earliest(due, std::max<int64_t>(0, slice_end_ns_ - thread_clock_ns(CLOCK_MONOTONIC)));
  return due;
}

Status Vm::save_cpu(ThreadCpu* c) {
  if (Status s = flush_sync_regs(); !s.ok()) return s;
  if (ioctl(vcpu_fd_, KVM_GET_REGS, &c->regs) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  c->xsave.resize(4096);
  if (ioctl(vcpu_fd_, kKvmGetXsave, c->xsave.data()) == 0) return Status();
  c->xsave.clear();
  if (ioctl(vcpu_fd_, KVM_GET_FPU, &c->fpu) < 0) return Status::error(errno_text("KVM_GET_FPU"));
  return Status();
}

Status Vm::load_cpu(const ThreadCpu& c) {
  // Registers still waiting in kvm_run are the thread leaving (saved, or exited).
  if (sync_regs_) run_->kvm_dirty_regs &= ~KVM_SYNC_X86_REGS;
  if (ioctl(vcpu_fd_, KVM_SET_REGS, &c.regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  if (!c.xsave.empty()) {
    if (ioctl(vcpu_fd_, kKvmSetXsave, c.xsave.data()) < 0) return Status::error(errno_text("KVM_SET_XSAVE"));
  } else if (ioctl(vcpu_fd_, KVM_SET_FPU, &c.fpu) < 0) {
    return Status::error(errno_text("KVM_SET_FPU"));
  }
  return Status();
}

Status Vm::thread_born(const kvm_regs& parent, int32_t tid, uint64_t stack) {
  ThreadCpu c;
  if (Status s = save_cpu(&c); !s.ok()) return s;  // the parent's FPU state
  c.regs = parent;
  c.regs.rax = 0;
  if (stack) c.regs.rsp = stack;
  thread_cpus_[tid] = std::move(c);
  return Status();
}

Status Vm::schedule(bool* idle) {
  *idle = false;
  ThreadTable& tt = proc_->threads;
  GuestThread* cur = &tt.current();
  if (!tt.several() && cur->runnable() && !cur->in_call) return Status();  // one thread, running
  const int64_t now = thread_clock_ns(CLOCK_MONOTONIC);
  tt.expire(now, thread_clock_ns(CLOCK_REALTIME), thread_clock_ns(CLOCK_BOOTTIME));
  route_signals();
  const bool slice_over = now >= slice_end_ns_;
  if (cur->runnable() && !cur->in_call && !(slice_over && has_runnable_other(tt))) {
    kick_.aim(next_kick_ns());
    return Status();
  }
  std::optional<size_t> next = tt.pick();
  if (!next) {
    *idle = true;
    kick_.aim(next_kick_ns());
    return Status();
  }
  if (*next != tt.current_index()) {
    if (!cur->exited) {
      if (Status s = save_cpu(&thread_cpus_[cur->tid]); !s.ok()) return s;
      cur->sigmask = proc_->sigmask;
      cur->fs_base = proc_->fs_base;
      cur->restart = restart_;
      if (auto d = std::exchange(proc_->call_deadline, std::nullopt)) cur->call_deadline = {{d->clock, d->at}};
    }
    proc_->call_deadline.reset();
    tt.set_current(*next);
    cur = &tt.current();
    auto it = thread_cpus_.find(cur->tid);
    if (it == thread_cpus_.end()) return Status::error("guest thread " + std::to_string(cur->tid) + " has no registers");
    if (Status s = load_cpu(it->second); !s.ok()) return s;
    thread_cpus_.erase(it);
    proc_->sigmask = cur->sigmask;
    proc_->fs_base = cur->fs_base;
    proc_->fs_base_changed = true;
    restart_ = std::exchange(cur->restart, false);
    if (auto d = std::exchange(cur->call_deadline, std::nullopt))
      proc_->call_deadline = Process::CallDeadline{d->first, d->second};
    tt.reap();
    cur = &tt.current();
    if (Status s = apply_vmm_changes(); !s.ok()) return s;
  }
  if (cur->in_call) {
    cur->in_call = false;
    kvm_regs r;
    if (Status s = flush_sync_regs(); !s.ok()) return s;
    if (ioctl(vcpu_fd_, KVM_GET_REGS, &r) < 0) return Status::error(errno_text("KVM_GET_REGS"));
    if (cur->result == kWaitForRelease) {
      // A signal cut the wait: back before the call (rax still holds its
      // number); delivery decides between EINTR and running it again, as
      // for a call the kick cut short (signal_delivery.cc).
      r.rip = r.rcx - 2;
      restart_ = true;
    } else {
      r.rax = static_cast<uint64_t>(cur->result);
    }
    if (ioctl(vcpu_fd_, KVM_SET_REGS, &r) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  }
  slice_end_ns_ = now + kSliceNs;
  kick_.aim(next_kick_ns());
  return Status();
}

void Vm::route_signals() {
  // Linux gives a process-wide signal to a thread that does not block it,
  // interrupting one that waits if none else can take it. Here the running
  // thread takes it at its next safe point, a runnable one at its turn; a
  // waiting one has its wait cut (the call ends with EINTR or runs again
  // after the handler, as SA_RESTART says).
  SignalState& s = proc_->signals;
  collect_signals(s);
  if (!s.pending) return;
  ThreadTable& tt = proc_->threads;
  const GuestThread& cur = tt.current();
  auto mask_of = [&](const GuestThread& t) { return &t == &cur ? proc_->sigmask : t.sigmask; };
  // rt_sigtimedwait takes a signal it waits for, blocked or not.
  for (GuestThread& t : tt.all())
    if (!t.exited && t.wait.kind == ThreadWait::Kind::kSignal && (t.wait.sigset & s.pending)) {
      tt.interrupt(t, kWaitForRelease);
      return;
    }
  for (const GuestThread& t : tt.all())
    if (t.runnable() && s.deliverable(mask_of(t), proc_->sigactions)) return;
  for (GuestThread& t : tt.all()) {
    if (t.exited || t.wait.kind == ThreadWait::Kind::kNone) continue;
    if (s.deliverable(mask_of(t), proc_->sigactions)) {
      tt.interrupt(t, kWaitForRelease);
      return;
    }
  }
}

void Vm::wait_idle() {
  ThreadTable& tt = proc_->threads;
  SignalState& s = proc_->signals;
  auto ready = [&] {
    if (pause_requested_.load() || stop_requested_.load() || tt.next_due_ns() == 0) return true;
    collect_signals(s);
    const GuestThread& cur = tt.current();
    for (const GuestThread& t : tt.all())
      if (!t.exited && s.deliverable(&t == &cur ? proc_->sigmask : t.sigmask, proc_->sigactions)) return true;
    return false;
  };
  wait_for_kick(ready, earliest(tt.next_due_ns(), s.next_due_ns()));
}

}  // namespace vmha
