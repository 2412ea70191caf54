// Process system calls: exit, identity, TLS (arch_prctl), limits, randomness,
// uname; threads and fork refused. Signals: signal_calls.cc.
#include <asm/prctl.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

int64_t sys_exit_group(Process& p, const SyscallArgs& a) {
  p.exit = {true, false, static_cast<int>(a.a[0] & 0xff)};
  return 0;
}

int64_t sys_getpid(Process&, const SyscallArgs&) { return getpid(); }
int64_t sys_getppid(Process&, const SyscallArgs&) { return getppid(); }
int64_t sys_getuid(Process&, const SyscallArgs&) { return getuid(); }
int64_t sys_geteuid(Process&, const SyscallArgs&) { return geteuid(); }
int64_t sys_getgid(Process&, const SyscallArgs&) { return getgid(); }
int64_t sys_getegid(Process&, const SyscallArgs&) { return getegid(); }
int64_t sys_set_tid_address(Process&, const SyscallArgs&) { return getpid(); }
int64_t sys_zero(Process&, const SyscallArgs&) { return 0; }
int64_t sys_enosys_quiet(Process&, const SyscallArgs&) { return -ENOSYS; }

int64_t sys_arch_prctl(Process& p, const SyscallArgs& a) {
  switch (a.a[0]) {
    case ARCH_SET_FS:
      if (a.a[1] >= (1ull << 47)) return -EPERM;
      p.fs_base = a.a[1];
      p.fs_base_changed = true;
      return 0;
    case ARCH_GET_FS:
      return p.as.copy_out(a.a[1], &p.fs_base, 8) ? 0 : -EFAULT;
    default:
      return -EINVAL;
  }
}

int64_t sys_clone(Process& p, const SyscallArgs& a) {
  p.log_once(4000, std::string("the guest tried to start a thread or a process (") + syscall_name(a.nr) +
                       "); vmha runs single-threaded programs only: returning ENOSYS");
  return -ENOSYS;
}

int64_t sys_prlimit64(Process& p, const SyscallArgs& a) {
  if (a.a[0] != 0 && static_cast<int64_t>(a.a[0]) != getpid()) return -ESRCH;
  rlimit r;
  if (getrlimit(static_cast<int>(a.a[1]), &r) < 0) return -errno;
  if (a.a[1] == RLIMIT_STACK) r.rlim_cur = std::min<rlim_t>(r.rlim_cur, 8u << 20);
  if (a.a[3] && !p.as.copy_out(a.a[3], &r, sizeof r)) return -EFAULT;
  return 0;  // new limits are accepted and ignored
}

int64_t sys_getrlimit(Process& p, const SyscallArgs& a) {
  SyscallArgs b{SYS_prlimit64, {0, a.a[0], 0, a.a[1], 0, 0}};
  return sys_prlimit64(p, b);
}

int64_t sys_getrandom(Process& p, const SyscallArgs& a) {
  std::vector<uint8_t> buf(std::min<uint64_t>(a.a[1], 1 << 20));
  ssize_t n = getrandom(buf.data(), buf.size(), static_cast<unsigned>(a.a[2]));
  if (n < 0) return -errno;
  return p.as.copy_out(a.a[0], buf.data(), n) ? n : -EFAULT;
}

int64_t sys_uname(Process& p, const SyscallArgs& a) {
  utsname u;
  uname(&u);
  return p.as.copy_out(a.a[0], &u, sizeof u) ? 0 : -EFAULT;
}

int64_t sys_sysinfo(Process& p, const SyscallArgs& a) {
  struct sysinfo s;
  sysinfo(&s);
  return p.as.copy_out(a.a[0], &s, sizeof s) ? 0 : -EFAULT;
}

int64_t sys_umask(Process&, const SyscallArgs& a) { return umask(static_cast<mode_t>(a.a[0])); }

int64_t sys_sched_getaffinity(Process& p, const SyscallArgs& a) {
  if (a.a[1] < 8) return -EINVAL;
  uint64_t one_cpu = 1;  // a single vCPU
  return p.as.copy_out(a.a[2], &one_cpu, 8) ? 8 : -EFAULT;
}

int64_t sys_getrusage(Process& p, const SyscallArgs& a) {
  rusage r;
  if (getrusage(RUSAGE_SELF, &r) < 0) return -errno;
  return p.as.copy_out(a.a[1], &r, sizeof r) ? 0 : -EFAULT;
}

int64_t sys_futex(Process& p, const SyscallArgs& a) {
  // One thread: a wait can only be for a value that already changed.
  int op = static_cast<int>(a.a[1]) & 127;
  if (op == 0 || op == 9) {  // FUTEX_WAIT, FUTEX_WAIT_BITSET
    uint32_t v;
    if (!p.as.copy_in(&v, a.a[0], 4)) return -EFAULT;
    if (v != static_cast<uint32_t>(a.a[2])) return -EAGAIN;
    p.log_once(5000, "futex wait with no other thread to wake it: returning ETIMEDOUT");
    return -ETIMEDOUT;
  }
  return 0;
}

int64_t sys_prctl(Process& p, const SyscallArgs& a) {
  switch (a.a[0]) {
    case 15:  // PR_SET_NAME
      return 0;
    case 16: {  // PR_GET_NAME
      char name[16] = "vmha-guest";
      return p.as.copy_out(a.a[1], name, sizeof name) ? 0 : -EFAULT;
    }
    default:
      return -EINVAL;
  }
}

const SyscallDef kDefs[] = {
    {SYS_prctl, "prctl", sys_prctl},
    {SYS_exit_group, "exit_group", sys_exit_group},
    {SYS_exit, "exit", sys_exit_group},
    {SYS_getpid, "getpid", sys_getpid},
    {SYS_gettid, "gettid", sys_getpid},
    {SYS_getppid, "getppid", sys_getppid},
    {SYS_getuid, "getuid", sys_getuid},
    {SYS_geteuid, "geteuid", sys_geteuid},
    {SYS_getgid, "getgid", sys_getgid},
    {SYS_getegid, "getegid", sys_getegid},
    {SYS_set_tid_address, "set_tid_address", sys_set_tid_address},
    {SYS_set_robust_list, "set_robust_list", sys_zero},
    {SYS_rseq, "rseq", sys_enosys_quiet},  // glibc falls back silently
    {SYS_arch_prctl, "arch_prctl", sys_arch_prctl},
    {SYS_clone, "clone", sys_clone},
    {SYS_clone3, "clone3", sys_clone},
    {SYS_fork, "fork", sys_clone},
    {SYS_vfork, "vfork", sys_clone},
    {SYS_execve, "execve", sys_clone},
    {SYS_prlimit64, "prlimit64", sys_prlimit64},
    {SYS_getrlimit, "getrlimit", sys_getrlimit},
    {SYS_setrlimit, "setrlimit", sys_zero},
    {SYS_getrandom, "getrandom", sys_getrandom},
    {SYS_uname, "uname", sys_uname},
    {SYS_sysinfo, "sysinfo", sys_sysinfo},
    {SYS_umask, "umask", sys_umask},
    {SYS_sched_getaffinity, "sched_getaffinity", sys_sched_getaffinity},
    {SYS_sched_yield, "sched_yield", sys_zero},
    {SYS_getrusage, "getrusage", sys_getrusage},
    {SYS_futex, "futex", sys_futex},
};

}  // namespace

std::span<const SyscallDef> process_syscalls() { return kDefs; }

}  // namespace vmha
