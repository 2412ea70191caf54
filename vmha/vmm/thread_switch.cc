// Guest threads on vCPU 0 (sys/threads.h says why): at each safe point
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

// Any thread but the running one can run, in this process or another.
static bool others_runnable(const ProcessTree& tree, const Process* running) {
  for (const auto& q : tree.all()) {
    if (q->zombie) continue;
    if (q.get() == running) {
      if (has_runnable_other(q->threads)) return true;
    } else if (q->threads.pick()) {
      return true;
    }
  }
  return false;
}

int64_t Vm::next_kick_ns() {
  int64_t due = -1;
  for (const auto& q : tree_->all()) {
    if (q->zombie) continue;
    due = earliest(due, q->signals.next_due_ns());
    if (q->threads.several() || q.get() != proc_) due = earliest(due, q->threads.next_due_ns());
  }
  if (proc_->threads.current().runnable() && others_runnable(*tree_, proc_))
    due = earliest(due, std::max<int64_t>(0, slice_end_ns_ - thread_clock_ns(CLOCK_MONOTONIC)));
  return due;
}

Status Vm::get_cpu(int fd, ThreadCpu* c) {
  if (ioctl(fd, KVM_GET_REGS, &c->regs) < 0) return Status::error(errno_text("KVM_GET_REGS"));
  c->xsave.resize(4096);
  if (ioctl(fd, kKvmGetXsave, c->xsave.data()) == 0) return Status();
  c->xsave.clear();
  if (ioctl(fd, KVM_GET_FPU, &c->fpu) < 0) return Status::error(errno_text("KVM_GET_FPU"));
  return Status();
}

Status Vm::set_cpu(int fd, const ThreadCpu& c) {
  if (ioctl(fd, KVM_SET_REGS, &c.regs) < 0) return Status::error(errno_text("KVM_SET_REGS"));
  if (!c.xsave.empty()) {
    if (ioctl(fd, kKvmSetXsave, c.xsave.data()) < 0) return Status::error(errno_text("KVM_SET_XSAVE"));
  } else if (ioctl(fd, KVM_SET_FPU, &c.fpu) < 0) {
    return Status::error(errno_text("KVM_SET_FPU"));
  }
  return Status();
}

Status Vm::save_cpu(ThreadCpu* c) {
  if (Status s = get_regs(&c->regs); !s.ok()) return s;
  c->xsave.resize(4096);
  if (ioctl(vcpu_fd_, kKvmGetXsave, c->xsave.data()) == 0) return Status();
  c->xsave.clear();
  if (ioctl(vcpu_fd_, KVM_GET_FPU, &c->fpu) < 0) return Status::error(errno_text("KVM_GET_FPU"));
  return Status();
}

Status Vm::load_cpu(const ThreadCpu& c) {
  // Registers still waiting in kvm_run are the thread leaving (saved, or
  // exited): replaced by the arriving thread's.
  if (Status s = set_regs(c.regs); !s.ok()) return s;
  if (!c.xsave.empty()) {
    if (ioctl(vcpu_fd_, kKvmSetXsave, c.xsave.data()) < 0) return Status::error(errno_text("KVM_SET_XSAVE"));
  } else if (ioctl(vcpu_fd_, KVM_SET_FPU, &c.fpu) < 0) {
    return Status::error(errno_text("KVM_SET_FPU"));
  }
  return Status();
}

Status Vm::thread_born(const kvm_regs& parent, ThreadKey key, uint64_t stack) {
  ThreadCpu c;
  if (Status s = save_cpu(&c); !s.ok()) return s;  // the parent's FPU state
  c.regs = parent;
  c.regs.rax = 0;
  if (stack) c.regs.rsp = stack;
  thread_cpus_[key] = std::move(c);
  return Status();
}

Status Vm::stash_current() {
  GuestThread& cur = proc_->threads.current();
  if (!cur.exited && !proc_->zombie) {
    if (Status s = save_cpu(&thread_cpus_[{proc_->pid, cur.tid}]); !s.ok()) return s;
    cur.restart = restart_;
    if (auto d = std::exchange(proc_->call_deadline, std::nullopt)) cur.call_deadline = {{d->clock, d->at}};
  }
  proc_->call_deadline.reset();
  restart_ = false;
  return Status();
}

Status Vm::install(Process* q, size_t index) {
  ThreadTable& tt = q->threads;
  if (index != tt.current_index()) {
    // The process's live mask and TLS base are its current thread's.
    GuestThread& old = tt.current();
    old.sigmask = q->sigmask;
    old.fs_base = q->fs_base;
    tt.set_current(index);
    q->sigmask = tt.current().sigmask;
    q->fs_base = tt.current().fs_base;
  }
  GuestThread& t = tt.current();
  auto it = thread_cpus_.find({q->pid, t.tid});
  if (it == thread_cpus_.end())
    return Status::error("guest thread " + std::to_string(t.tid) + " of process " + std::to_string(q->pid) +
                         " has no registers");
  if (Status s = load_cpu(it->second); !s.ok()) return s;
  thread_cpus_.erase(it);
  restart_ = std::exchange(t.restart, false);
  if (auto d = std::exchange(t.call_deadline, std::nullopt))
    q->call_deadline = Process::CallDeadline{d->first, d->second};
  q->fs_base_changed = true;
  tt.reap();
  if (q != proc_) {
    proc_ = q;
    as_ = q->as;
    pt_ = &q->as->page_table();
    as_->take_flush();
    if (Status s = load_cr3(); !s.ok()) return s;
    tree_->collect(proc_);
  }
  return apply_vmm_changes();
}

Status Vm::load_cr3() {
  // A copy of the top-level table is what drops this KVM's shadow TLB: only
  // when the process's tables changed since vCPU 0 last loaded them. The
  // same root otherwise, whose shadow pages KVM keeps among its recent
  // roots: a shell and its child, switching at every fork and wait, then
  // do not fault in every page again.
  kvm_sregs sregs;
  if (Status s = get_sregs(&sregs); !s.ok()) return s;
  sregs.cr3 = as_->generation() == as_->loaded_generation() ? pt_->cr3() : pt_->flush_root();
  as_->set_loaded_generation(as_->generation());
  return set_sregs(sregs);
}

Status Vm::schedule(bool* idle) {
  *idle = false;
  ThreadTable& tt = proc_->threads;
  GuestThread* cur = &tt.current();
  if (!tree_->several() && !tt.several() && cur->runnable() && !cur->in_call && !yield_)
    return Status();  // one thread of one process, running
  const int64_t now = thread_clock_ns(CLOCK_MONOTONIC);
  const int64_t real = thread_clock_ns(CLOCK_REALTIME), boot = thread_clock_ns(CLOCK_BOOTTIME);
  for (const auto& q : tree_->all()) {
    if (q->zombie) continue;
    q->threads.expire(now, real, boot);
    route_signals(*q);
  }
  const bool slice_over = now >= slice_end_ns_ || yield_;
  yield_ = false;
  // A thread that a helper vCPU sent back to run a system call here goes first.
  std::optional<std::pair<Process*, size_t>> wanted = take_want_main();
  if (!wanted && !proc_->zombie && cur->runnable() && !cur->in_call &&
      !(slice_over && others_runnable(*tree_, proc_))) {
    kick_.aim(next_kick_ns());
    return Status();
  }
  // Other processes first, in tree order after this one, then this one's
  // threads (its current thread last): every process gets its turn.
  auto& all = tree_->all();
  size_t here = 0;
  while (here < all.size() && all[here].get() != proc_) ++here;
  Process* next = wanted ? wanted->first : nullptr;
  size_t index = wanted ? wanted->second : 0;
  for (size_t k = 1; k <= all.size() && !next; ++k) {
    Process* q = all[(here + k) % all.size()].get();
    if (q->zombie) continue;
    std::optional<size_t> i = q != proc_ && q->threads.current().runnable() && !q->threads.turn_passed()
                                  ? q->threads.current_index()
                                  : q->threads.pick();
    if (i) {
      next = q;
      index = *i;
    }
  }
  if (!next) {
    *idle = true;
    kick_.aim(next_kick_ns());
    return Status();
  }
  if (next != proc_) tt.set_turn_passed(slice_over);
  next->threads.set_turn_passed(false);
  if (next != proc_ || index != tt.current_index()) {
    if (Status s = stash_current(); !s.ok()) return s;
    if (Status s = install(next, index); !s.ok()) return s;
  }
  cur = &proc_->threads.current();
  if (cur->in_call) {
    cur->in_call = false;
    kvm_regs r;
    if (Status s = get_regs(&r); !s.ok()) return s;
    if (cur->result == kWaitForRelease) {
      // A signal cut the wait: back before the call (rax still holds its
      // number); delivery decides between EINTR and running it again, as
      // for a call the kick cut short (signal_delivery.cc).
      r.rip = r.rcx - 2;
      restart_ = true;
    } else {
      r.rax = static_cast<uint64_t>(cur->result);
    }
    if (Status s = set_regs(r); !s.ok()) return s;
  }
  slice_end_ns_ = now + kSliceNs;
  kick_.aim(next_kick_ns());
  return Status();
}

void Vm::route_signals(Process& p) {
  // Linux gives a process-wide signal to a thread that does not block it,
  // interrupting one that waits if none else can take it. Here the running
  // thread takes it at its next safe point, a runnable one at its turn; a
  // waiting one has its wait cut (the call ends with EINTR or runs again
  // after the handler, as SA_RESTART says).
  // Host signals go to the first process; each process's own timers to it.
  SignalState& s = p.signals;
  if (&p == &tree_->root())
    collect_signals(s);
  else
    s.expire_timers();
  if (!s.pending) return;
  ThreadTable& tt = p.threads;
  const GuestThread& cur = tt.current();
  auto mask_of = [&](const GuestThread& t) { return &t == &cur ? p.sigmask : t.sigmask; };
  // rt_sigtimedwait takes a signal it waits for, blocked or not.
  for (GuestThread& t : tt.all())
    if (!t.exited && t.wait.kind == ThreadWait::Kind::kSignal && (t.wait.sigset & s.pending)) {
      tt.interrupt(t, kWaitForRelease);
      return;
    }
  for (const GuestThread& t : tt.all())
    if (t.runnable() && s.deliverable(mask_of(t), p.sigactions)) return;
  for (GuestThread& t : tt.all()) {
    if (t.exited || t.wait.kind == ThreadWait::Kind::kNone) continue;
    if (s.deliverable(mask_of(t), p.sigactions)) {
      tt.interrupt(t, kWaitForRelease);
      return;
    }
  }
}

void Vm::wait_idle() {
  auto ready = [&] {
    if (pause_requested_.load() || stop_requested_.load()) return true;
    for (const auto& q : tree_->all()) {
      if (q->zombie) continue;
      const ThreadTable& tt = q->threads;
      if (tt.next_due_ns() == 0) return true;
      if (q.get() == &tree_->root())
        collect_signals(q->signals);
      else
        q->signals.expire_timers();
      const GuestThread& cur = tt.current();
      for (const GuestThread& t : tt.all())
        if (!t.exited && q->signals.deliverable(&t == &cur ? q->sigmask : t.sigmask, q->sigactions)) return true;
    }
    return false;
  };
  int64_t due = -1;
  for (const auto& q : tree_->all())
    if (!q->zombie) due = earliest(due, earliest(q->threads.next_due_ns(), q->signals.next_due_ns()));
  wait_for_kick(ready, due);
}

}  // namespace vmha
