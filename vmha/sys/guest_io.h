// Helpers shared by the file system calls: guest iovec arrays to host
// scatter lists, and the one path by which guest output leaves the VM.
#pragma once
#include <sys/uio.h>

#include <functional>
#include <vector>

#include "vmha/sys/process.h"

namespace vmha {

// Reads a guest `struct iovec[count]` and gathers all of it; false on EFAULT.
bool gather_guest_iovec(Process& p, uint64_t iov_va, uint64_t count, bool write, std::vector<iovec>& out);

// A pipe, guest socket or inherited stream that would block the host call
// while another guest thread or process could run (the writer of this very
// pipe, often): the caller gives the vCPU up and retries at its next turn.
bool would_yield(Process& p, const FdEntry& e, short events);

// A host wait for readiness on behalf of a guest call (poll, select,
// epoll_wait) whose timeout is timeout_ns (-1: none): `look(ms)` is the host
// call with a timeout in milliseconds. A call an epoch pause cut short
// restarts with what is left of its timeout (Process::call_deadline); while
// another guest thread or process could run, it only looks and gives the
// vCPU up when nothing is ready. look's count, -errno, kRetryLater or
// kWaitForRelease.
int64_t wait_for_ready(Process& p, int64_t timeout_ns, const std::function<int(int)>& look);

// pselect6's and epoll_pwait's mask, in force while the call waits (as
// rt_sigsuspend's): -EINTR, the mask left for the handler's frame to save
// the one from before, when a signal it lets through is pending; else 0.
// The caller sets the mask from before back once the wait ends.
int64_t apply_wait_mask(Process& p, uint64_t mask);

// Writes host-side buffers as the guest's write to fd: through the output
// layer unless both ends stay inside the VM. Raises SIGPIPE
// like Linux. Returns bytes or -errno.
int64_t write_for_guest(Process& p, int fd, const std::vector<iovec>& iov, off_t offset);

}  // namespace vmha
