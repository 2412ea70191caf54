// Time system calls, served from the host's clocks.
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include <cerrno>
#include <limits>
#include <utility>

#include "vmha/sys/process_tree.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

int64_t sys_clock_gettime(Process& p, const SyscallArgs& a) {
  timespec ts;
  if (clock_gettime(static_cast<clockid_t>(a.a[0]), &ts) < 0) return -errno;
  return p.as->copy_out(a.a[1], &ts, sizeof ts) ? 0 : -EFAULT;
}

int64_t sys_clock_getres(Process& p, const SyscallArgs& a) {
  timespec ts;
  if (clock_getres(static_cast<clockid_t>(a.a[0]), &ts) < 0) return -errno;
  if (!a.a[1]) return 0;
  return p.as->copy_out(a.a[1], &ts, sizeof ts) ? 0 : -EFAULT;
}

int64_t sys_gettimeofday(Process& p, const SyscallArgs& a) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  if (a.a[0] && !p.as->copy_out(a.a[0], &tv, sizeof tv)) return -EFAULT;
  return 0;
}

int64_t sys_time(Process& p, const SyscallArgs& a) {
  time_t t = time(nullptr);
  if (a.a[0] && !p.as->copy_out(a.a[0], &t, sizeof t)) return -EFAULT;
  return t;
}

bool valid(const timespec& t) { return t.tv_sec >= 0 && t.tv_nsec >= 0 && t.tv_nsec < 1000000000; }

timespec add_saturating(const timespec& a, const timespec& b) {
  constexpr time_t kMax = std::numeric_limits<time_t>::max();
  timespec r{};
  r.tv_nsec = a.tv_nsec + b.tv_nsec;
  time_t carry = r.tv_nsec >= 1000000000 ? 1 : 0;
  r.tv_nsec -= carry * 1000000000;
  if (a.tv_sec > kMax - b.tv_sec - carry) return timespec{kMax, 999999999};
  r.tv_sec = a.tv_sec + b.tv_sec + carry;
  return r;
}

// Sleeps until an absolute deadline on `clock`. The host's sleep ends early
// when the VMM signals the vCPU thread for an epoch pause: the call then
// restarts after the pause (kWaitForRelease puts the guest back before the
// syscall) and goes on to the same deadline, as Linux restarts a sleep
// interrupted by a signal whose handler asked for it.
int64_t sleep_until(Process& p, clockid_t clock, const timespec& deadline) {
  int r = clock_nanosleep(clock, TIMER_ABSTIME, &deadline, nullptr);
  if (r == EINTR) {
    p.call_deadline = Process::CallDeadline{clock, deadline};
    return kWaitForRelease;
  }
  return -r;
}

// With other threads, a sleeping thread leaves the vCPU to them: a timed
// wait in the thread table (sys/threads.h) until `deadline`.
int64_t sleep_as_thread(Process& p, clockid_t clock, const timespec& deadline) {
  if (clock != CLOCK_MONOTONIC && clock != CLOCK_REALTIME && clock != CLOCK_BOOTTIME) return -EINVAL;
  ThreadWait w;
  w.kind = ThreadWait::Kind::kSleep;
  w.timed = true;
  w.clock = clock;
  w.deadline_ns = deadline.tv_sec >= std::numeric_limits<int64_t>::max() / 1000000000 - 1
                      ? std::numeric_limits<int64_t>::max()
                      : static_cast<int64_t>(deadline.tv_sec) * 1000000000 + deadline.tv_nsec;
  if (thread_clock_ns(clock) >= w.deadline_ns) return 0;
  p.threads.block(w);
  return kSwitchThread;
}

// A relative sleep: its deadline is fixed at the first attempt.
int64_t sleep_for(Process& p, clockid_t clock, const timespec& req) {
  if (shares_vcpu(p)) {
    timespec now;
    if (clock_gettime(clock, &now) < 0) return -errno;
    return sleep_as_thread(p, clock, add_saturating(now, req));
  }
  auto restarted = std::exchange(p.call_deadline, std::nullopt);
  if (restarted && restarted->clock == clock) return sleep_until(p, clock, restarted->at);
  timespec now;
  if (clock_gettime(clock, &now) < 0) return -errno;
  return sleep_until(p, clock, add_saturating(now, req));
}

int64_t sys_nanosleep(Process& p, const SyscallArgs& a) {
  timespec req;
  if (!p.as->copy_in(&req, a.a[0], sizeof req)) return -EFAULT;
  if (!valid(req)) return -EINVAL;
  return sleep_for(p, CLOCK_MONOTONIC, req);  // Linux measures nanosleep on CLOCK_MONOTONIC
}

int64_t sys_clock_nanosleep(Process& p, const SyscallArgs& a) {
  timespec req;
  if (!p.as->copy_in(&req, a.a[2], sizeof req)) return -EFAULT;
  if (!valid(req)) return -EINVAL;
  const auto clock = static_cast<clockid_t>(a.a[0]);
  const int flags = static_cast<int>(a.a[1]);
  if (flags & ~TIMER_ABSTIME) return -EINVAL;
  if (flags & TIMER_ABSTIME) {
    p.call_deadline.reset();
    if (shares_vcpu(p)) return sleep_as_thread(p, clock, req);
    return sleep_until(p, clock, req);
  }
  return sleep_for(p, clock, req);
}

const SyscallDef kDefs[] = {
    {SYS_clock_gettime, "clock_gettime", sys_clock_gettime},
    {SYS_clock_getres, "clock_getres", sys_clock_getres},
    {SYS_gettimeofday, "gettimeofday", sys_gettimeofday},
    {SYS_time, "time", sys_time},
    {SYS_nanosleep, "nanosleep", sys_nanosleep},
    {SYS_clock_nanosleep, "clock_nanosleep", sys_clock_nanosleep},
};

}  // namespace

std::span<const SyscallDef> time_syscalls() { return kDefs; }

}  // namespace vmha
