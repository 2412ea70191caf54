// The guest's system calls: one table from number to handler, filled from
// one list per group (memory, files, paths, links, time, process, signals,
// threads, futex, sockets). Unknown numbers
// return -ENOSYS and are logged once.
#pragma once
#include <cstdint>
#include <span>

#include "vmha/sys/process.h"

namespace vmha {

struct SyscallArgs {
  uint64_t nr = 0;
  uint64_t a[6] = {};
};

// Argument i as a guest descriptor.
inline int fd_arg(const SyscallArgs& a, int i) { return static_cast<int>(a.a[i]); }

using SyscallFn = int64_t (*)(Process&, const SyscallArgs&);

struct SyscallDef {
  uint64_t nr;
  const char* name;
  SyscallFn fn;
};

std::span<const SyscallDef> memory_syscalls();
std::span<const SyscallDef> file_syscalls();
std::span<const SyscallDef> path_syscalls();
std::span<const SyscallDef> link_syscalls();
std::span<const SyscallDef> time_syscalls();
std::span<const SyscallDef> process_syscalls();
std::span<const SyscallDef> signal_syscalls();
std::span<const SyscallDef> thread_syscalls();
std::span<const SyscallDef> futex_syscalls();
std::span<const SyscallDef> fork_syscalls();
std::span<const SyscallDef> socket_syscalls();
std::span<const SyscallDef> socket_name_syscalls();
std::span<const SyscallDef> epoll_syscalls();

// clone/clone3 without CLONE_THREAD (fork_calls.cc).
int64_t clone_process(Process& p, const SyscallArgs& a, uint64_t flags, uint64_t stack, uint64_t parent_tid,
                      uint64_t child_tid, uint64_t tls);

// Wakes up to `n` waiters of the futex word at va, whether they wait with a
// private or a shared operation (futex_calls.cc): the kernel's wake for
// CLONE_CHILD_CLEARTID, which glibc's pthread_join waits on as shared.
int futex_wake_any(Process& p, uint64_t va, int n);

int64_t dispatch_syscall(Process& p, const SyscallArgs& args);
const char* syscall_name(uint64_t nr);  // "" when neither vmha nor Linux knows it
// Linux's name of an x86-64 system call ("socket" for 41), from the kernel
// headers at build time; "" for a number Linux does not have.
const char* linux_syscall_name(uint64_t nr);

}  // namespace vmha
