// Process system calls of the tree (sys/process_tree.h): fork, vfork and
// clone of a process, wait4 and waitid, execve (the VMM loads the image),
// the ids (getpid, getppid, process groups and sessions).
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "vmha/sys/process_tree.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

// What a new process may ask for: its exit signal (low byte), a vfork, and
// the tid words and TLS glibc passes.
constexpr uint64_t kProcessFlags = 0xff | CLONE_VM | CLONE_VFORK | CLONE_SETTLS | CLONE_PARENT_SETTID |
                                   CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_FS | CLONE_SYSVSEM;

int64_t refuse(Process& p, const SyscallArgs& a, uint64_t flags) {
  char hex[24];
  snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(flags));
  p.log_once(4000 + (flags & 0xffffff00),
             std::string(syscall_name(a.nr)) + " with flags " + hex +
                 " (a process sharing its parent's files or signal handlers, or in new namespaces) is not "
                 "supported: returning ENOSYS");
  return -ENOSYS;
}

int64_t sys_getpid(Process& p, const SyscallArgs&) { return p.pid; }
int64_t sys_getppid(Process& p, const SyscallArgs&) { return p.ppid; }
int64_t sys_getpgrp(Process& p, const SyscallArgs&) { return p.pgid; }

Process* target(Process& p, uint64_t arg) {
  const int32_t pid = static_cast<int32_t>(arg);
  if (pid == 0) return &p;
  Process* t = p.tree ? p.tree->find(pid) : nullptr;
  return t && !(t->zombie && t->ppid == 0) ? t : nullptr;
}

int64_t sys_getpgid(Process& p, const SyscallArgs& a) {
  Process* t = target(p, a.a[0]);
  return t ? t->pgid : -ESRCH;
}

int64_t sys_getsid(Process& p, const SyscallArgs& a) {
  Process* t = target(p, a.a[0]);
  return t ? t->sid : -ESRCH;
}

int64_t sys_setpgid(Process& p, const SyscallArgs& a) {
  if (static_cast<int32_t>(a.a[1]) < 0) return -EINVAL;
  Process* t = target(p, a.a[0]);
  if (!t || (t != &p && t->ppid != p.pid)) return -ESRCH;
  if (t->sid != p.sid || t->pid == t->sid) return -EPERM;  // another session, or a session leader
  const int32_t pgid = a.a[1] ? static_cast<int32_t>(a.a[1]) : t->pid;
  if (pgid != t->pid) {
    bool in_session = false;
    for (const auto& q : p.tree->all())
      if (!q->zombie && q->pgid == pgid && q->sid == p.sid) in_session = true;
    if (!in_session) return -EPERM;
  }
  t->pgid = pgid;
  return 0;
}

int64_t sys_setsid(Process& p, const SyscallArgs&) {
  if (p.tree && p.tree->group_exists(p.pid)) return -EPERM;  // already leads a group
  p.sid = p.pgid = p.pid;
  return p.pid;
}

}  // namespace

int64_t clone_process(Process& p, const SyscallArgs& a, uint64_t flags, uint64_t stack, uint64_t parent_tid,
                      uint64_t child_tid, uint64_t tls) {
  if (!p.tree || (flags & ~kProcessFlags)) return refuse(p, a, flags);
  const bool vfork = flags & CLONE_VFORK;
  if ((flags & CLONE_VM) && !vfork) return refuse(p, a, flags);  // memory shared for good
  if ((flags & CLONE_SETTLS) && tls >= (1ull << 47)) return -EPERM;
  int err = 0;
  Process* c = p.tree->fork(p, flags & CLONE_VM, &err);
  if (!c) return err;
  if (flags & CLONE_SETTLS) c->fs_base = c->threads.current().fs_base = tls;
  const int32_t pid = c->pid;
  if ((flags & CLONE_PARENT_SETTID) && !p.as->copy_out(parent_tid, &pid, 4)) return -EFAULT;
  if ((flags & CLONE_CHILD_SETTID) && !c->as->copy_out(child_tid, &pid, 4)) return -EFAULT;
  if (flags & CLONE_CHILD_CLEARTID) c->threads.current().clear_child_tid = child_tid;
  p.tree->set_birth({pid, stack});
  if (vfork) {
    // The parent's thread waits until the child execs or ends (it uses the
    // parent's memory and, for vfork, its stack).
    ThreadWait w;
    w.kind = ThreadWait::Kind::kChild;
    w.child = pid;
    w.options = kVforkWait;
    p.threads.block(w);
    return kSwitchThread;
  }
  return pid;
}

namespace {

int64_t sys_fork(Process& p, const SyscallArgs& a) { return clone_process(p, a, SIGCHLD, 0, 0, 0, 0); }
int64_t sys_vfork(Process& p, const SyscallArgs& a) {
  return clone_process(p, a, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
}

constexpr uint32_t kWait4Options = WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WALL | __WCLONE;

int64_t sys_wait4(Process& p, const SyscallArgs& a) {
  ThreadWait w;
  w.kind = ThreadWait::Kind::kChild;
  w.child = static_cast<int32_t>(a.a[0]);
  w.out_va = a.a[1];
  w.options = static_cast<uint32_t>(a.a[2]);
  w.rusage_va = a.a[3];
  if (w.options & ~kWait4Options) return -EINVAL;
  if (w.child == INT32_MIN) return -ESRCH;
  if (!p.tree) return -ECHILD;
  return p.tree->wait(p, w);
}

int64_t sys_waitid(Process& p, const SyscallArgs& a) {
  ThreadWait w;
  w.kind = ThreadWait::Kind::kChild;
  w.waitid = true;
  const int32_t id = static_cast<int32_t>(a.a[1]);
  switch (a.a[0]) {
    case P_ALL:
      w.child = -1;
      break;
    case P_PID:
      if (id <= 0) return -EINVAL;
      w.child = id;
      break;
    case P_PGID:
      if (id < 0) return -EINVAL;
      w.child = id ? -static_cast<int64_t>(id) : 0;
      if (id == 1) return -ECHILD;  // -1 would mean "any child"
      break;
    default:
      return -EINVAL;  // P_PIDFD: no pidfds here
  }
  w.out_va = a.a[2];
  w.options = static_cast<uint32_t>(a.a[3]);
  w.rusage_va = a.a[4];
  if (!(w.options & (WEXITED | WSTOPPED | WCONTINUED))) return -EINVAL;
  if (!(w.options & WEXITED)) return -ECHILD;  // only ends are reported
  if (!p.tree) return -ECHILD;
  return p.tree->wait(p, w);
}

// execve(path, argv, envp): the strings are read here; the VMM loads the
// program after the call (Process::exec) and gives the answer.
int64_t read_string_list(Process& p, uint64_t va, std::vector<std::string>* out) {
  size_t total = 0;
  for (size_t i = 0; va; ++i) {
    if (i >= 65536) return -E2BIG;
    uint64_t ptr = 0;
    if (!p.as->copy_in(&ptr, va + i * 8, 8)) return -EFAULT;
    if (!ptr) break;
    std::string s;
    if (int e = p.as->read_string(ptr, s, 128 * 1024)) return e == -ENAMETOOLONG ? -E2BIG : e;
    total += s.size() + 1;
    if (total > (2u << 20)) return -E2BIG;
    out->push_back(std::move(s));
  }
  return 0;
}

int64_t sys_execve(Process& p, const SyscallArgs& a) {
  ExecRequest req;
  if (int e = p.as->read_string(a.a[0], req.path)) return e;
  if (req.path.empty()) return -ENOENT;
  if (int64_t e = read_string_list(p, a.a[1], &req.argv)) return e;
  if (int64_t e = read_string_list(p, a.a[2], &req.envp)) return e;
  p.exec = std::move(req);
  return 0;
}

const SyscallDef kDefs[] = {
    {SYS_fork, "fork", sys_fork},
    {SYS_vfork, "vfork", sys_vfork},
    {SYS_wait4, "wait4", sys_wait4},
    {SYS_waitid, "waitid", sys_waitid},
    {SYS_execve, "execve", sys_execve},
    {SYS_getpid, "getpid", sys_getpid},
    {SYS_getppid, "getppid", sys_getppid},
    {SYS_getpgrp, "getpgrp", sys_getpgrp},
    {SYS_getpgid, "getpgid", sys_getpgid},
    {SYS_setpgid, "setpgid", sys_setpgid},
    {SYS_getsid, "getsid", sys_getsid},
    {SYS_setsid, "setsid", sys_setsid},
};

}  // namespace

std::span<const SyscallDef> fork_syscalls() { return kDefs; }

}  // namespace vmha
