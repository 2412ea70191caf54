#include "vmha/sys/syscall_table.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace vmha {

namespace {

constexpr uint64_t kMaxNr = 512;

struct Table {
  SyscallDef defs[kMaxNr] = {};
  Table() {
    for (auto group : {memory_syscalls(), file_syscalls(), path_syscalls(), link_syscalls(), time_syscalls(), process_syscalls(),
                       signal_syscalls(), thread_syscalls(), futex_syscalls(), fork_syscalls(), socket_syscalls(),
                       socket_name_syscalls(), epoll_syscalls()})
      for (const SyscallDef& d : group)
        if (d.nr < kMaxNr) defs[d.nr] = d;
  }
};

const Table& table() {
  static const Table t;
  return t;
}

// VMHA_TRACE=1 (vmha(1) ENVIRONMENT): every call and its answer on stderr,
// as strace shows them; answers vmha keeps to itself are named.
bool tracing() {
  static const bool on = [] {
    const char* v = std::getenv("VMHA_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void trace(const Process& p, const SyscallArgs& a, int64_t ret) {
  const char* name = syscall_name(a.nr);
  const char* special = ret == kWaitForRelease ? " (restarts)" : ret == kRetryLater ? " (yields, retried)" : "";
  std::fprintf(stderr, "[%d.%d] %s(%#llx, %#llx, %#llx, %#llx) = %lld%s\n", p.pid, p.threads.current().tid,
               *name ? name : std::to_string(a.nr).c_str(), static_cast<unsigned long long>(a.a[0]),
               static_cast<unsigned long long>(a.a[1]), static_cast<unsigned long long>(a.a[2]),
               static_cast<unsigned long long>(a.a[3]), static_cast<long long>(ret), special);
}

int64_t dispatch(Process& p, const SyscallArgs& args) {
  if (args.nr < kMaxNr && table().defs[args.nr].fn) return table().defs[args.nr].fn(p, args);
  const std::string name = linux_syscall_name(args.nr);
  p.log_once(args.nr, "unsupported system call " +
                          (name.empty() ? std::to_string(args.nr) : name + " (" + std::to_string(args.nr) + ")") +
                          ": returning ENOSYS to the guest");
  return -ENOSYS;
}

}  // namespace

const char* syscall_name(uint64_t nr) {
  if (nr < kMaxNr && table().defs[nr].name) return table().defs[nr].name;
  return linux_syscall_name(nr);
}

int64_t dispatch_syscall(Process& p, const SyscallArgs& args) {
  if (!tracing()) return dispatch(p, args);
  const int64_t ret = dispatch(p, args);
  trace(p, args, ret);
  return ret;
}

}  // namespace vmha
