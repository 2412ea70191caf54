// Process system calls: identity, TLS (arch_prctl), limits, randomness,
// uname. Threads and exit: thread_calls.cc; fork, wait, execve and ids: fork_calls.cc; futex: futex_calls.cc;
// signals: signal_calls.cc.
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
#include <cstdint>
#include <vector>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

int64_t sys_getuid(Process&, const SyscallArgs&) { return getuid(); }
int64_t sys_geteuid(Process&, const SyscallArgs&) { return geteuid(); }
int64_t sys_getgid(Process&, const SyscallArgs&) { return getgid(); }
int64_t sys_getegid(Process&, const SyscallArgs&) { return getegid(); }
int64_t sys_zero(Process&, const SyscallArgs&) { return 0; }

int64_t sys_getgroups(Process& p, const SyscallArgs& a) {
  const int size = static_cast<int>(a.a[0]);
  if (size < 0) return -EINVAL;
  gid_t groups[NGROUPS_MAX];
  int n = getgroups(NGROUPS_MAX, groups);
  if (n < 0) return -errno;
  if (size == 0) return n;
  if (size < n) return -EINVAL;
  return p.as->copy_out(a.a[1], groups, static_cast<uint64_t>(n) * sizeof(gid_t)) ? n : -EFAULT;
}

// setuid, setresuid and the gid ones: the guest keeps vmha's ids; asking for
// them again succeeds (posix_spawn's POSIX_SPAWN_RESETIDS does), any other
// id is EPERM, as for an unprivileged process.
bool same_ids(const SyscallArgs& a, int n, uint64_t real, uint64_t effective) {
  for (int i = 0; i < n; ++i) {
    const uint32_t id = static_cast<uint32_t>(a.a[i]);
    if (id != UINT32_MAX && id != real && id != effective) return false;
  }
  return true;
}
int64_t sys_setuids(Process&, const SyscallArgs& a) {
  const int n = a.nr == SYS_setuid ? 1 : a.nr == SYS_setreuid ? 2 : 3;
  return same_ids(a, n, getuid(), geteuid()) ? 0 : -EPERM;
}
int64_t sys_setgids(Process&, const SyscallArgs& a) {
  const int n = a.nr == SYS_setgid ? 1 : a.nr == SYS_setregid ? 2 : 3;
  return same_ids(a, n, getgid(), getegid()) ? 0 : -EPERM;
}
int64_t sys_getresuid(Process& p, const SyscallArgs& a) {
  const uint32_t r = getuid(), e = geteuid();
  return p.as->copy_out(a.a[0], &r, 4) && p.as->copy_out(a.a[1], &e, 4) && p.as->copy_out(a.a[2], &e, 4) ? 0
                                                                                                       : -EFAULT;
}
int64_t sys_getresgid(Process& p, const SyscallArgs& a) {
  const uint32_t r = getgid(), e = getegid();
  return p.as->copy_out(a.a[0], &r, 4) && p.as->copy_out(a.a[1], &e, 4) && p.as->copy_out(a.a[2], &e, 4) ? 0
                                                                                                       : -EFAULT;
}
int64_t sys_enosys_quiet(Process&, const SyscallArgs&) { return -ENOSYS; }

int64_t sys_arch_prctl(Process& p, const SyscallArgs& a) {
  switch (a.a[0]) {
    case ARCH_SET_FS:
      if (a.a[1] >= (1ull << 47)) return -EPERM;
      p.fs_base = a.a[1];
      p.fs_base_changed = true;
      return 0;
    case ARCH_GET_FS:
      return p.as->copy_out(a.a[1], &p.fs_base, 8) ? 0 : -EFAULT;
    default:
      return -EINVAL;
  }
}

int64_t sys_prlimit64(Process& p, const SyscallArgs& a) {
  if (a.a[0] != 0 && static_cast<int64_t>(a.a[0]) != p.pid) return -ESRCH;
  rlimit r;
  if (getrlimit(static_cast<int>(a.a[1]), &r) < 0) return -errno;
  if (a.a[1] == RLIMIT_STACK) r.rlim_cur = std::min<rlim_t>(r.rlim_cur, 8u << 20);
  if (a.a[3] && !p.as->copy_out(a.a[3], &r, sizeof r)) return -EFAULT;
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
  return p.as->copy_out(a.a[0], buf.data(), n) ? n : -EFAULT;
}

int64_t sys_uname(Process& p, const SyscallArgs& a) {
  utsname u;
  uname(&u);
  return p.as->copy_out(a.a[0], &u, sizeof u) ? 0 : -EFAULT;
}

int64_t sys_sysinfo(Process& p, const SyscallArgs& a) {
  struct sysinfo s;
  sysinfo(&s);
  return p.as->copy_out(a.a[0], &s, sizeof s) ? 0 : -EFAULT;
}

int64_t sys_umask(Process&, const SyscallArgs& a) { return umask(static_cast<mode_t>(a.a[0])); }

int64_t sys_getrusage(Process& p, const SyscallArgs& a) {
  rusage r;
  if (getrusage(RUSAGE_SELF, &r) < 0) return -errno;
  return p.as->copy_out(a.a[1], &r, sizeof r) ? 0 : -EFAULT;
}

int64_t sys_prctl(Process& p, const SyscallArgs& a) {
  switch (a.a[0]) {
    case 15:  // PR_SET_NAME
      return 0;
    case 16: {  // PR_GET_NAME
      char name[16] = "vmha-guest";
      return p.as->copy_out(a.a[1], name, sizeof name) ? 0 : -EFAULT;
    }
    default:
      return -EINVAL;
  }
}

const SyscallDef kDefs[] = {
    {SYS_prctl, "prctl", sys_prctl},
    {SYS_getuid, "getuid", sys_getuid},
    {SYS_geteuid, "geteuid", sys_geteuid},
    {SYS_getgid, "getgid", sys_getgid},
    {SYS_getegid, "getegid", sys_getegid},
    {SYS_getgroups, "getgroups", sys_getgroups},
    {SYS_setuid, "setuid", sys_setuids},
    {SYS_setreuid, "setreuid", sys_setuids},
    {SYS_setresuid, "setresuid", sys_setuids},
    {SYS_setgid, "setgid", sys_setgids},
    {SYS_setregid, "setregid", sys_setgids},
    {SYS_setresgid, "setresgid", sys_setgids},
    {SYS_getresuid, "getresuid", sys_getresuid},
    {SYS_getresgid, "getresgid", sys_getresgid},
    {SYS_rseq, "rseq", sys_enosys_quiet},  // glibc falls back silently
    {SYS_arch_prctl, "arch_prctl", sys_arch_prctl},
    {SYS_prlimit64, "prlimit64", sys_prlimit64},
    {SYS_getrlimit, "getrlimit", sys_getrlimit},
    {SYS_setrlimit, "setrlimit", sys_zero},
    {SYS_getrandom, "getrandom", sys_getrandom},
    {SYS_uname, "uname", sys_uname},
    {SYS_sysinfo, "sysinfo", sys_sysinfo},
    {SYS_umask, "umask", sys_umask},
    {SYS_getrusage, "getrusage", sys_getrusage},
};

}  // namespace

std::span<const SyscallDef> process_syscalls() { return kDefs; }

}  // namespace vmha
