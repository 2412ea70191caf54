// The signal system calls' part that the VMM's delivery needs.
#pragma once
#include "vmha/sys/syscall_table.h"

namespace vmha {

// A handler is about to run while the guest sits before system call `a`
// again, because the call was cut short (a blocking host call woken by a
// kick, or a wait for held output). As Linux: true when the call runs again
// after the handler (SA_RESTART on a restartable call, or a call that had
// not started to wait); false when it fails with EINTR, having written what
// is left of a relative sleep.
bool interrupted_call_restarts(Process& p, const SyscallArgs& a, bool sa_restart);

}  // namespace vmha
