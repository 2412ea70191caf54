// Signal system calls: dispositions, mask, pending set, alternate stack,
// signals to itself, waiting for signals, and the timers that raise them
// (alarm, setitimer, timer_create). Delivery on the guest stack and
// rt_sigreturn are the VMM's (vmm/signal_delivery.cc): they need registers.
// Signals to other processes are refused (the guest is the only process in
// its VM): ESRCH when no such process exists, EPERM otherwise.
#include "vmha/sys/signal_calls.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "vmha/sys/process_tree.h"
#include "vmha/sys/signal_kick.h"

namespace vmha {

namespace {

constexpr int64_t kNs = 1000000000;
constexpr int kSigevSignal = 0, kSigevNone = 1, kSigevThreadId = 4;
constexpr int kMinSigStackSize = 2048;  // MINSIGSTKSZ
constexpr uint32_t kSsAutodisarm = 1u << 31;

int64_t to_ns(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * kNs + t.tv_nsec; }
int64_t to_ns(const timeval& t) { return static_cast<int64_t>(t.tv_sec) * kNs + t.tv_usec * 1000; }
timespec ts_of(int64_t ns) { return timespec{ns / kNs, ns % kNs}; }
timeval tv_of(int64_t ns) {
  // Linux rounds a running timer's remaining time up to a whole microsecond.
  int64_t us = (ns + 999) / 1000;
  return timeval{us / 1000000, us % 1000000};
}
bool valid(const timespec& t) { return t.tv_sec >= 0 && t.tv_nsec >= 0 && t.tv_nsec < kNs; }
bool valid(const timeval& t) { return t.tv_sec >= 0 && t.tv_usec >= 0 && t.tv_usec < 1000000; }

bool is_self(const Process& p, int64_t pid) { return pid == p.pid; }

// Another process: EPERM when it exists, ESRCH when it does not.
int64_t not_ours(int64_t pid) { return (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0) ? -EPERM : -ESRCH; }

// A signal this process sends itself.
int64_t send_self(Process& p, int sig, int code) {
  if (sig == 0) return 0;
  if (sig < 1 || sig > kMaxSignal) return -EINVAL;
  p.signals.raise(sig, code);
  return 0;
}

bool read_mask(Process& p, uint64_t va, uint64_t size, uint64_t* mask) {
  return size == 8 && p.as->copy_in(mask, va, 8);
}

int64_t sys_rt_sigaction(Process& p, const SyscallArgs& a) {
  int sig = static_cast<int>(a.a[0]);
  if (sig < 1 || sig > kMaxSignal || a.a[3] != 8) return -EINVAL;
  if (a.a[1] && (sig == SIGKILL || sig == SIGSTOP)) return -EINVAL;
  KernelSigaction old = p.sigactions[sig];
  if (a.a[1]) {
    KernelSigaction sa;
    if (!p.as->copy_in(&sa, a.a[1], sizeof sa)) return -EFAULT;
    sa.mask &= ~kUnblockable;
    p.sigactions[sig] = sa;
    // Setting a pending signal to be ignored discards it, blocked or not.
    if (sa.handler == kSigIgn || (sa.handler == kSigDfl && default_ignores(sig))) p.signals.pending &= ~sigbit(sig);
  }
  if (a.a[2] && !p.as->copy_out(a.a[2], &old, sizeof old)) return -EFAULT;
  return 0;
}

int64_t sys_rt_sigprocmask(Process& p, const SyscallArgs& a) {
  if (a.a[3] != 8) return -EINVAL;
  uint64_t old = p.sigmask;
  if (a.a[1]) {
    uint64_t set;
    if (!p.as->copy_in(&set, a.a[1], 8)) return -EFAULT;
    switch (a.a[0]) {
      case SIG_BLOCK:
        p.sigmask |= set;
        break;
      case SIG_UNBLOCK:
        p.sigmask &= ~set;
        break;
      case SIG_SETMASK:
        p.sigmask = set;
        break;
      default:
        return -EINVAL;
    }
    p.sigmask &= ~kUnblockable;
  }
  if (a.a[2] && !p.as->copy_out(a.a[2], &old, 8)) return -EFAULT;
  return 0;
}

int64_t sys_rt_sigpending(Process& p, const SyscallArgs& a) {
  if (a.a[1] != 8) return -EINVAL;
  collect_signals(p.signals);
  uint64_t blocked_pending = p.signals.pending & p.sigmask;
  return p.as->copy_out(a.a[0], &blocked_pending, 8) ? 0 : -EFAULT;
}

bool on_altstack(const SignalState& s) {
  const GuestStack& st = s.altstack;
  return st.flags != SS_DISABLE && s.syscall_sp > st.sp && s.syscall_sp - st.sp <= st.size;
}

int64_t sys_sigaltstack(Process& p, const SyscallArgs& a) {
  SignalState& s = p.signals;
  GuestStack old = s.altstack;
  old.flags = on_altstack(s) ? SS_ONSTACK : (s.altstack.flags == SS_DISABLE ? SS_DISABLE : 0);
  if (a.a[0]) {
    GuestStack ss;
    if (!p.as->copy_in(&ss, a.a[0], sizeof ss)) return -EFAULT;
    if (on_altstack(s)) return -EPERM;
    int mode = static_cast<int>(static_cast<uint32_t>(ss.flags) & ~kSsAutodisarm);
    if (mode != 0 && mode != SS_DISABLE && mode != SS_ONSTACK) return -EINVAL;
    if (mode == SS_DISABLE) {
      s.altstack = GuestStack{};
    } else {
      if (ss.size < kMinSigStackSize) return -ENOMEM;
      s.altstack = GuestStack{ss.sp, 0, 0, ss.size};
    }
  }
  if (a.a[1] && !p.as->copy_out(a.a[1], &old, sizeof old)) return -EFAULT;
  return 0;
}

// Sends `sig` to another process of the tree (SI_USER, from `from`).
void send_to(Process& from, Process& to, int sig) {
  if (sig == 0 || to.zombie) return;
  GuestSiginfo si;
  si.code = SI_USER;
  si.set_u32(0, static_cast<uint32_t>(from.pid));
  si.set_u32(4, static_cast<uint32_t>(getuid()));
  to.signals.raise(sig, si);
}

int64_t sys_kill(Process& p, const SyscallArgs& a) {
  int64_t pid = static_cast<int64_t>(a.a[0]);
  int sig = static_cast<int>(a.a[1]);
  if (sig < 0 || sig > kMaxSignal) return -EINVAL;
  if (is_self(p, pid)) return send_self(p, sig, SI_USER);
  if (pid == INT64_MIN || pid > INT32_MAX || pid < -static_cast<int64_t>(INT32_MAX)) return -ESRCH;
  if (pid > 0) {
    Process* t = p.tree ? p.tree->find(static_cast<int32_t>(pid)) : nullptr;
    if (!t || (t->zombie && t->ppid == 0)) return not_ours(pid);
    send_to(p, *t, sig);
    return 0;
  }
  // A group (0: the caller's), or -1: every process of the tree but the
  // caller; the guest reaches no process outside its tree.
  const int32_t pgid = pid == 0 ? p.pgid : static_cast<int32_t>(-pid);
  if (pid == -1 && !(p.tree && p.tree->several())) return -EPERM;
  bool any = false, self = false;
  if (p.tree)
    for (auto& q : p.tree->all()) {
      if (q->zombie || (pid != -1 && q->pgid != pgid)) continue;
      any = true;
      if (q.get() == &p)
        self = pid != -1;
      else
        send_to(p, *q, sig);
    }
  if (self) return send_self(p, sig, SI_USER);
  if (!any) return pid == -1 ? -EPERM : not_ours(pgid);
  return 0;
}

// One of the guest's own threads. A signal sent to a thread is pending for
// the process here (the thread on the vCPU takes it), a simplification of
// Linux's per-thread pending set.
bool own_thread(Process& p, int64_t tid) { return tid <= INT32_MAX && p.threads.find(static_cast<int32_t>(tid)); }

int64_t sys_tgkill(Process& p, const SyscallArgs& a) {
  int64_t tgid = static_cast<int64_t>(a.a[0]), tid = static_cast<int64_t>(a.a[1]);
  if (tgid <= 0 || tid <= 0) return -EINVAL;
  if (!is_self(p, tgid)) {
    Process* t = p.tree ? p.tree->find(static_cast<int32_t>(tgid)) : nullptr;
    if (!t || t->zombie || !t->threads.find(static_cast<int32_t>(tid))) return not_ours(tid);
    if (a.a[2] > kMaxSignal) return -EINVAL;
    send_to(p, *t, static_cast<int>(a.a[2]));
    return 0;
  }
  if (!own_thread(p, tid)) return -ESRCH;
  return send_self(p, static_cast<int>(a.a[2]), SI_TKILL);
}

int64_t sys_tkill(Process& p, const SyscallArgs& a) {
  int64_t tid = static_cast<int64_t>(a.a[0]);
  if (tid <= 0) return -EINVAL;
  if (!own_thread(p, tid)) return not_ours(tid);
  return send_self(p, static_cast<int>(a.a[1]), SI_TKILL);
}

bool signal_ready(Process& p) {
  collect_signals(p.signals);
  return p.signals.deliverable(p.sigmask, p.sigactions) != 0;
}

// pause and rt_sigsuspend: EINTR once a signal is there to deliver (the VMM
// delivers it on the way out); a wake-up with none (an epoch pause) runs
// the call again afterwards.
int64_t wait_for_signal(Process& p) {
  if (wait_for_kick([&] { return signal_ready(p); }, p.signals.next_due_ns())) return -EINTR;
  return signal_ready(p) ? -EINTR : kWaitForRelease;
}

// With other threads, a thread waiting for a signal leaves the vCPU to them:
// a wait in the thread table that a signal cuts (the VMM's route_signals),
// after which the call runs again (and finds it) or ends in EINTR.
int64_t wait_as_thread(Process& p, uint64_t set, int64_t deadline_ns) {
  ThreadWait w;
  w.kind = ThreadWait::Kind::kSignal;
  w.sigset = set;
  if (deadline_ns >= 0) {
    w.timed = true;
    w.clock = CLOCK_MONOTONIC;
    w.deadline_ns = deadline_ns;
  }
  p.threads.block(w);
  return kSwitchThread;
}

int64_t sys_pause(Process& p, const SyscallArgs&) {
  if (shares_vcpu(p)) return signal_ready(p) ? -EINTR : wait_as_thread(p, 0, -1);
  return wait_for_signal(p);
}

int64_t sys_rt_sigsuspend(Process& p, const SyscallArgs& a) {
  uint64_t mask;
  if (a.a[1] != 8) return -EINVAL;
  if (!p.as->copy_in(&mask, a.a[0], 8)) return -EFAULT;
  SignalState& s = p.signals;
  if (!s.saved_mask) s.saved_mask = p.sigmask;
  p.sigmask = mask & ~kUnblockable;
  if (shares_vcpu(p)) return signal_ready(p) ? -EINTR : wait_as_thread(p, 0, -1);
  int64_t r = wait_for_signal(p);
  if (r == kWaitForRelease) {  // back to before the call, as a checkpoint may see it
    p.sigmask = *s.saved_mask;
    s.saved_mask.reset();
  }
  return r;  // -EINTR: the frame saves the mask from before the call
}

int64_t sys_rt_sigtimedwait(Process& p, const SyscallArgs& a) {
  uint64_t set;
  if (!read_mask(p, a.a[0], a.a[3], &set)) return a.a[3] != 8 ? -EINVAL : -EFAULT;
  set &= ~kUnblockable;
  SignalState& s = p.signals;
  auto restarted = std::exchange(p.call_deadline, std::nullopt);
  int64_t deadline = -1;
  if (a.a[2]) {
    timespec t;
    if (!p.as->copy_in(&t, a.a[2], sizeof t)) return -EFAULT;
    if (!valid(t)) return -EINVAL;
    deadline = restarted ? to_ns(restarted->at) : SignalState::now_ns(CLOCK_MONOTONIC) + to_ns(t);
  }
  GuestSiginfo info;
  auto outcome = [&]() -> int64_t {
    collect_signals(s);
    if (int sig = s.take(set, &info)) {
      if (a.a[1] && !p.as->copy_out(a.a[1], &info, sizeof info)) return -EFAULT;
      return sig;
    }
    if (s.deliverable(p.sigmask & ~set, p.sigactions) & ~set) return -EINTR;
    if (deadline >= 0 && SignalState::now_ns(CLOCK_MONOTONIC) >= deadline) return -EAGAIN;
    return 0;
  };
  int64_t r = 0;
  if (shares_vcpu(p)) {
    if ((r = outcome()) != 0) return r;
    return wait_as_thread(p, set, deadline);
  }
  auto left = [&] {
    int64_t due = s.next_due_ns();
    if (deadline < 0) return due;
    int64_t t = std::max<int64_t>(0, deadline - SignalState::now_ns(CLOCK_MONOTONIC));
    return due < 0 ? t : std::min(due, t);
  };
  wait_for_kick([&] { return (r = outcome()) != 0; }, left());
  if (r == 0) r = outcome();
  if (r != 0) return r;
  if (deadline >= 0) p.call_deadline = Process::CallDeadline{CLOCK_MONOTONIC, ts_of(deadline)};
  return kWaitForRelease;
}

// Timers. Slot 0 is ITIMER_REAL; timer_create's id N is slot N+1.
GuestTimer* timer_slot(Process& p, uint64_t id) {
  if (id >= static_cast<uint64_t>(kMaxTimers)) return nullptr;
  GuestTimer& t = p.signals.timers[id + 1];
  return t.used ? &t : nullptr;
}

int64_t remaining_ns(const GuestTimer& t) {
  if (!t.deadline_ns) return 0;
  return std::max<int64_t>(1, t.deadline_ns - SignalState::now_ns(t.clock));
}

void arm(Process& p, GuestTimer& t, int64_t value_ns, int64_t interval_ns, bool absolute) {
  t.interval_ns = interval_ns;
  if (value_ns == 0)
    t.deadline_ns = 0;
  else
    t.deadline_ns = std::max<int64_t>(1, absolute ? value_ns : SignalState::now_ns(t.clock) + value_ns);
  p.signals.timers_changed = true;
}

GuestTimer& itimer_real(Process& p) {
  GuestTimer& t = p.signals.timers[0];
  if (!t.used) t = GuestTimer{true, CLOCK_MONOTONIC, SIGALRM, true, 0, 0, 0, 0, 0};
  return t;
}

// A disarmed ITIMER_REAL is no state (a VM state needs no version 2 for it).
void forget_if_disarmed(GuestTimer& t) {
  if (!t.deadline_ns) t = GuestTimer{};
}

int64_t sys_alarm(Process& p, const SyscallArgs& a) {
  GuestTimer& t = itimer_real(p);
  int64_t left = remaining_ns(t);
  arm(p, t, static_cast<int64_t>(static_cast<uint32_t>(a.a[0])) * kNs, 0, false);
  forget_if_disarmed(t);
  // Whole seconds, rounded as Linux does (never 0 for a timer still running).
  int64_t secs = left / kNs;
  if ((secs == 0 && left > 0) || left % kNs >= kNs / 2) ++secs;
  return secs;
}

bool itimer_supported(Process& p, uint64_t which) {
  if (which == ITIMER_REAL) return true;
  if (which == ITIMER_VIRTUAL || which == ITIMER_PROF)
    p.log_once(6000 + which, std::string("setitimer(") + (which == ITIMER_VIRTUAL ? "ITIMER_VIRTUAL" : "ITIMER_PROF") +
                                 ") is not supported (CPU-time timers): returning EINVAL");
  return false;
}

int64_t sys_getitimer(Process& p, const SyscallArgs& a) {
  if (!itimer_supported(p, a.a[0])) return -EINVAL;
  const GuestTimer& t = p.signals.timers[0];  // all zero when never armed
  itimerval v{tv_of(t.interval_ns), tv_of(remaining_ns(t))};
  return p.as->copy_out(a.a[1], &v, sizeof v) ? 0 : -EFAULT;
}

int64_t sys_setitimer(Process& p, const SyscallArgs& a) {
  if (!itimer_supported(p, a.a[0])) return -EINVAL;
  itimerval v{};
  if (a.a[1] && !p.as->copy_in(&v, a.a[1], sizeof v)) return -EFAULT;
  if (!valid(v.it_value) || !valid(v.it_interval)) return -EINVAL;
  GuestTimer& t = itimer_real(p);
  itimerval old{tv_of(t.interval_ns), tv_of(remaining_ns(t))};
  arm(p, t, to_ns(v.it_value), to_ns(v.it_interval), false);  // NULL: disarm, as Linux does
  forget_if_disarmed(t);
  if (a.a[2] && !p.as->copy_out(a.a[2], &old, sizeof old)) return -EFAULT;
  return 0;
}

struct GuestSigevent {  // the kernel's struct sigevent (64 bytes)
  uint64_t value;
  int32_t signo, notify, tid;
  int32_t pad[11];
};
static_assert(sizeof(GuestSigevent) == 64);

int64_t sys_timer_create(Process& p, const SyscallArgs& a) {
  const auto clock = static_cast<int32_t>(a.a[0]);
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME) {
    p.log_once(6100 + static_cast<uint32_t>(clock & 0xff),
               "timer_create on clock " + std::to_string(clock) +
                   " is not supported (CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME are): returning EINVAL");
    return -EINVAL;
  }
  int slot = 1;
  while (slot <= kMaxTimers && p.signals.timers[slot].used) ++slot;
  if (slot > kMaxTimers) return -EAGAIN;
  GuestTimer t{true, clock, SIGALRM, true, static_cast<uint64_t>(slot - 1), 0, 0, 0, 0};
  if (a.a[1]) {
    GuestSigevent ev;
    if (!p.as->copy_in(&ev, a.a[1], sizeof ev)) return -EFAULT;
    if (ev.notify == kSigevThreadId && !is_self(p, ev.tid)) return -EINVAL;
    if (ev.notify != kSigevSignal && ev.notify != kSigevNone && ev.notify != kSigevThreadId) return -EINVAL;
    if (ev.notify != kSigevNone && (ev.signo < 1 || ev.signo > kMaxSignal)) return -EINVAL;
    t.notify = ev.notify != kSigevNone;
    t.signo = ev.signo;
    t.value = ev.value;
  }
  int32_t id = slot - 1;
  if (!p.as->copy_out(a.a[2], &id, sizeof id)) return -EFAULT;
  p.signals.timers[slot] = t;
  return 0;
}

int64_t sys_timer_settime(Process& p, const SyscallArgs& a) {
  GuestTimer* t = timer_slot(p, a.a[0]);
  if (!t) return -EINVAL;
  itimerspec v;
  if (!p.as->copy_in(&v, a.a[2], sizeof v)) return -EFAULT;
  if (!valid(v.it_value) || !valid(v.it_interval)) return -EINVAL;
  itimerspec old{ts_of(t->interval_ns), ts_of(remaining_ns(*t))};
  arm(p, *t, to_ns(v.it_value), to_ns(v.it_interval), a.a[1] & TIMER_ABSTIME);
  if (a.a[3] && !p.as->copy_out(a.a[3], &old, sizeof old)) return -EFAULT;
  return 0;
}

int64_t sys_timer_gettime(Process& p, const SyscallArgs& a) {
  GuestTimer* t = timer_slot(p, a.a[0]);
  if (!t) return -EINVAL;
  itimerspec v{ts_of(t->interval_ns), ts_of(remaining_ns(*t))};
  return p.as->copy_out(a.a[1], &v, sizeof v) ? 0 : -EFAULT;
}

int64_t sys_timer_getoverrun(Process& p, const SyscallArgs& a) {
  GuestTimer* t = timer_slot(p, a.a[0]);
  return t ? static_cast<int64_t>(t->last_overrun) : -EINVAL;
}

int64_t sys_timer_delete(Process& p, const SyscallArgs& a) {
  GuestTimer* t = timer_slot(p, a.a[0]);
  if (!t) return -EINVAL;
  // Its signal, still pending, goes with it.
  SignalState& s = p.signals;
  if (t->notify && (s.pending & sigbit(t->signo)) && s.info[t->signo].code == SI_TIMER) {
    uint32_t id;
    std::memcpy(&id, s.info[t->signo].fields, 4);
    if (id == a.a[0]) s.pending &= ~sigbit(t->signo);
  }
  *t = GuestTimer{};
  s.timers_changed = true;
  return 0;
}

const SyscallDef kDefs[] = {
    {SYS_rt_sigaction, "rt_sigaction", sys_rt_sigaction},
    {SYS_rt_sigprocmask, "rt_sigprocmask", sys_rt_sigprocmask},
    {SYS_rt_sigpending, "rt_sigpending", sys_rt_sigpending},
    {SYS_sigaltstack, "sigaltstack", sys_sigaltstack},
    {SYS_kill, "kill", sys_kill},
    {SYS_tgkill, "tgkill", sys_tgkill},
    {SYS_tkill, "tkill", sys_tkill},
    {SYS_pause, "pause", sys_pause},
    {SYS_rt_sigsuspend, "rt_sigsuspend", sys_rt_sigsuspend},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", sys_rt_sigtimedwait},
    {SYS_alarm, "alarm", sys_alarm},
    {SYS_getitimer, "getitimer", sys_getitimer},
    {SYS_setitimer, "setitimer", sys_setitimer},
    {SYS_timer_create, "timer_create", sys_timer_create},
    {SYS_timer_settime, "timer_settime", sys_timer_settime},
    {SYS_timer_gettime, "timer_gettime", sys_timer_gettime},
    {SYS_timer_getoverrun, "timer_getoverrun", sys_timer_getoverrun},
    {SYS_timer_delete, "timer_delete", sys_timer_delete},
    // rt_sigreturn is served by the VMM before this table (it sets registers).
};

bool blocking_fd(Process& p, uint64_t fd) {
  FdEntry* e = p.fds.get(static_cast<int>(fd));
  return e && e->kind != FdKind::kFile && e->kind != FdKind::kReadOnly;
}

}  // namespace

std::span<const SyscallDef> signal_syscalls() { return kDefs; }

bool interrupted_call_restarts(Process& p, const SyscallArgs& a, bool sa_restart) {
  auto deadline = std::exchange(p.call_deadline, std::nullopt);
  switch (a.nr) {
    // Never restarted after a handler (signal(7)); sleeps report what is left.
    case SYS_nanosleep:
    case SYS_clock_nanosleep: {
      uint64_t rem = a.nr == SYS_nanosleep ? a.a[1] : a.a[3];
      bool relative = a.nr == SYS_nanosleep || !(a.a[1] & TIMER_ABSTIME);
      if (relative && rem && deadline) {
        int64_t left = std::max<int64_t>(0, to_ns(deadline->at) - SignalState::now_ns(deadline->clock));
        timespec t = ts_of(left);
        (void)p.as->copy_out(rem, &t, sizeof t);
      }
      return false;
    }
    case SYS_pause:
    case SYS_poll:
    case SYS_ppoll:
    case SYS_select:
    case SYS_pselect6:
    case SYS_epoll_wait:
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
    case SYS_rt_sigtimedwait:
      return false;
    // Restarted with SA_RESTART; a regular file never waited.
    case SYS_read:
    case SYS_readv:
    case SYS_pread64:
    case SYS_preadv:
    case SYS_write:
    case SYS_writev:
    case SYS_pwrite64:
    case SYS_pwritev:
    case SYS_ioctl:
    case SYS_sendfile:
      return sa_restart || !blocking_fd(p, a.nr == SYS_sendfile ? a.a[1] : a.a[0]);
    case SYS_wait4:
    case SYS_futex:
    case SYS_accept:
    case SYS_accept4:
    case SYS_recvfrom:
    case SYS_recvmsg:
    case SYS_sendto:
    case SYS_sendmsg:
    case SYS_connect:
      return sa_restart;
    default:  // it had not started to wait: as if the signal came just before it
      return true;
  }
}

}  // namespace vmha
