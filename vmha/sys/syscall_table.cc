#include "vmha/sys/syscall_table.h"

#include <cerrno>
#include <string>
#include <vector>

namespace vmha {

namespace {

constexpr uint64_t kMaxNr = 512;

struct Table {
  SyscallDef defs[kMaxNr] = {};
  Table() {
    for (auto group : {memory_syscalls(), file_syscalls(), path_syscalls(), time_syscalls(), process_syscalls(),
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

}  // namespace

const char* syscall_name(uint64_t nr) {
  if (nr < kMaxNr && table().defs[nr].name) return table().defs[nr].name;
  return linux_syscall_name(nr);
}

int64_t dispatch_syscall(Process& p, const SyscallArgs& args) {
  if (args.nr < kMaxNr && table().defs[args.nr].fn) return table().defs[args.nr].fn(p, args);
  const std::string name = linux_syscall_name(args.nr);
  p.log_once(args.nr, "unsupported system call " +
                          (name.empty() ? std::to_string(args.nr) : name + " (" + std::to_string(args.nr) + ")") +
                          ": returning ENOSYS to the guest");
  return -ENOSYS;
}

}  // namespace vmha
