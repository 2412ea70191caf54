// Helpers shared by the file system calls: guest iovec arrays to host
// scatter lists, and the one path by which guest output leaves the VM.
#pragma once
#include <sys/uio.h>

#include <vector>

#include "vmha/sys/process.h"

namespace vmha {

// Reads a guest `struct iovec[count]` and gathers all of it; false on EFAULT.
bool gather_guest_iovec(Process& p, uint64_t iov_va, uint64_t count, bool write, std::vector<iovec>& out);

// A pipe, guest socket or inherited stream that would block the host call
// while another guest thread or process could run (the writer of this very
// pipe, often): the caller gives the vCPU up and retries at its next turn.
bool would_yield(Process& p, const FdEntry& e, short events);

// Writes host-side buffers as the guest's write to fd: through the output
// layer unless both ends stay inside the VM. Raises SIGPIPE
// like Linux. Returns bytes or -errno.
int64_t write_for_guest(Process& p, int fd, const std::vector<iovec>& iov, off_t offset);

}  // namespace vmha
