// Time system calls, served from the host's clocks.
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>

#include <cerrno>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

int64_t sys_clock_gettime(Process& p, const SyscallArgs& a) {
  timespec ts;
  if (clock_gettime(static_cast<clockid_t>(a.a[0]), &ts) < 0) return -errno;
  return p.as.copy_out(a.a[1], &ts, sizeof ts) ? 0 : -EFAULT;
}

int64_t sys_clock_getres(Process& p, const SyscallArgs& a) {
  timespec ts;
  if (clock_getres(static_cast<clockid_t>(a.a[0]), &ts) < 0) return -errno;
  if (!a.a[1]) return 0;
  return p.as.copy_out(a.a[1], &ts, sizeof ts) ? 0 : -EFAULT;
}

int64_t sys_gettimeofday(Process& p, const SyscallArgs& a) {
  timeval tv;
  gettimeofday(&tv, nullptr);
  if (a.a[0] && !p.as.copy_out(a.a[0], &tv, sizeof tv)) return -EFAULT;
  return 0;
}

int64_t sys_time(Process& p, const SyscallArgs& a) {
  time_t t = time(nullptr);
  if (a.a[0] && !p.as.copy_out(a.a[0], &t, sizeof t)) return -EFAULT;
  return t;
}

int64_t sys_nanosleep(Process& p, const SyscallArgs& a) {
  timespec req, rem{};
  if (!p.as.copy_in(&req, a.a[0], sizeof req)) return -EFAULT;
  if (nanosleep(&req, &rem) < 0) {
    int err = errno;
    if (a.a[1]) p.as.copy_out(a.a[1], &rem, sizeof rem);
    return -err;
  }
  return 0;
}

int64_t sys_clock_nanosleep(Process& p, const SyscallArgs& a) {
  timespec req, rem{};
  if (!p.as.copy_in(&req, a.a[2], sizeof req)) return -EFAULT;
  int r = clock_nanosleep(static_cast<clockid_t>(a.a[0]), static_cast<int>(a.a[1]), &req, &rem);
  if (r && a.a[3]) p.as.copy_out(a.a[3], &rem, sizeof rem);
  return -r;
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
