// Thread system calls: clone and clone3 for threads (what pthread_create
// passes), exit of one thread and of the process, set_tid_address, gettid,
// set_robust_list, sched_yield, sched_getaffinity. clone and clone3 without
// CLONE_THREAD start a process (fork_calls.cc).
// How threads run: sys/threads.h.
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

// What a thread needs: one address space, fd table, fs and signal handlers.
constexpr uint64_t kThreadFlags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
// What vmha also understands about a thread's start.
constexpr uint64_t kThreadExtras = CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID |
                                   CLONE_CHILD_SETTID | CLONE_DETACHED;

int64_t refuse_thread(Process& p, const SyscallArgs& a, uint64_t flags) {
  char hex[24];
  snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(flags));
  p.log_once(4001, std::string(syscall_name(a.nr)) + " of a thread with flags " + hex +
                       " (a thread that does not share everything with its process) is not supported: "
                       "returning ENOSYS");
  return -ENOSYS;
}

int64_t start_thread(Process& p, const SyscallArgs& a, uint64_t flags, uint64_t stack, uint64_t parent_tid,
                     uint64_t child_tid, uint64_t tls) {
  if (!(flags & CLONE_THREAD)) return clone_process(p, a, flags, stack, parent_tid, child_tid, tls);
  if ((flags & kThreadFlags) != kThreadFlags || (flags & ~(kThreadFlags | kThreadExtras | 0xff)))
    return refuse_thread(p, a, flags);
  if ((flags & 0xff) != 0) return -EINVAL;  // a thread has no exit signal
  if ((flags & CLONE_SETTLS) && tls >= (1ull << 47)) return -EPERM;
  const uint64_t sigmask = p.sigmask, fs_base = (flags & CLONE_SETTLS) ? tls : p.fs_base;
  int32_t tid = 0;
  GuestThread* t = p.threads.add(&tid);
  if (!t) return -EAGAIN;
  t->sigmask = sigmask;
  t->fs_base = fs_base;
  if (flags & CLONE_CHILD_CLEARTID) t->clear_child_tid = child_tid;
  // One address space: the parent's and the child's tid words are the same memory.
  if ((flags & CLONE_PARENT_SETTID) && !p.as->copy_out(parent_tid, &tid, 4)) return -EFAULT;
  if ((flags & CLONE_CHILD_SETTID) && !p.as->copy_out(child_tid, &tid, 4)) return -EFAULT;
  p.threads.set_birth({tid, stack});
  return tid;
}

int64_t sys_clone(Process& p, const SyscallArgs& a) {
  // x86-64: clone(flags, stack, parent_tid, child_tid, tls)
  return start_thread(p, a, a.a[0], a.a[1], a.a[2], a.a[3], a.a[4]);
}

struct CloneArgs {  // struct clone_args, version 0 (64 bytes) and what follows
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
  uint64_t set_tid, set_tid_size, cgroup;
};

int64_t sys_clone3(Process& p, const SyscallArgs& a) {
  CloneArgs c{};
  const uint64_t size = a.a[1];
  if (size < 64) return -EINVAL;
  if (size > 4096) return -E2BIG;
  if (!p.as->copy_in(&c, a.a[0], std::min<uint64_t>(size, sizeof c))) return -EFAULT;
  if (c.set_tid || c.set_tid_size || (c.flags >> 32) || c.exit_signal > 64 || (c.flags & 0xff)) return -EINVAL;
  if (c.exit_signal && (c.flags & CLONE_THREAD)) return -EINVAL;
  c.flags |= c.exit_signal;
  if (c.stack_size && !c.stack) return -EINVAL;
  return start_thread(p, a, c.flags, c.stack + c.stack_size, c.parent_tid, c.child_tid, c.tls);
}

int64_t sys_exit_group(Process& p, const SyscallArgs& a) {
  p.exit = {true, false, static_cast<int>(a.a[0] & 0xff)};
  return 0;
}

// One thread ends; the last one ends the process with its status.
int64_t sys_exit(Process& p, const SyscallArgs& a) {
  if (p.threads.live() <= 1) return sys_exit_group(p, a);
  GuestThread& t = p.threads.current();
  if (t.clear_child_tid) {
    // What pthread_join waits for: the word cleared and one waiter woken.
    const uint32_t zero = 0;
    if (p.as->copy_out(t.clear_child_tid, &zero, 4)) futex_wake_any(p, t.clear_child_tid, 1);
  }
  t.exited = true;
  return kSwitchThread;
}

int64_t sys_set_tid_address(Process& p, const SyscallArgs& a) {
  GuestThread& t = p.threads.current();
  t.clear_child_tid = a.a[0];
  return p.threads.guest_id(t);
}

int64_t sys_gettid(Process& p, const SyscallArgs&) { return p.threads.guest_id(p.threads.current()); }

int64_t sys_set_robust_list(Process&, const SyscallArgs& a) {
  return a.a[1] == 24 ? 0 : -EINVAL;  // accepted; a thread that dies holds no lock another one outlives
}

int64_t sys_sched_yield(Process& p, const SyscallArgs&) {
  GuestThread& t = p.threads.current();
  if (!p.threads.several()) return 0;
  t.in_call = true;
  t.result = 0;
  return kSwitchThread;
}

int64_t sys_sched_getaffinity(Process& p, const SyscallArgs& a) {
  // The CPUs this host process may use (what nproc and OpenMP count).
  uint8_t mask[1024] = {};
  const uint64_t len = std::min<uint64_t>(a.a[1], sizeof mask);
  long n = syscall(SYS_sched_getaffinity, 0, len, mask);
  if (n < 0) return -errno;
  return p.as->copy_out(a.a[2], mask, static_cast<size_t>(n)) ? n : -EFAULT;
}

const SyscallDef kDefs[] = {
    {SYS_clone, "clone", sys_clone},
    {SYS_clone3, "clone3", sys_clone3},
    {SYS_exit, "exit", sys_exit},
    {SYS_exit_group, "exit_group", sys_exit_group},
    {SYS_set_tid_address, "set_tid_address", sys_set_tid_address},
    {SYS_gettid, "gettid", sys_gettid},
    {SYS_set_robust_list, "set_robust_list", sys_set_robust_list},
    {SYS_sched_yield, "sched_yield", sys_sched_yield},
    {SYS_sched_getaffinity, "sched_getaffinity", sys_sched_getaffinity},
};

}  // namespace

std::span<const SyscallDef> thread_syscalls() { return kDefs; }

}  // namespace vmha
