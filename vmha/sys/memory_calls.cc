// Memory system calls: brk, mmap (anonymous, and private file mappings copied
// in), munmap, mprotect, mremap, madvise.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "vmha/sys/syscall_table.h"
#include "vmha/mem/guest_layout.h"

namespace vmha {

namespace {

int64_t sys_brk(Process& p, const SyscallArgs& a) { return p.as->brk(a.a[0]); }

int64_t sys_mmap(Process& p, const SyscallArgs& a) {
  uint64_t addr = a.a[0], len = a.a[1];
  int prot = static_cast<int>(a.a[2]), flags = static_cast<int>(a.a[3]);
  int fd = static_cast<int>(a.a[4]);
  uint64_t off = a.a[5];
  if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC)) return -EINVAL;
  int type = flags & MAP_TYPE;
  if (type != MAP_PRIVATE && type != MAP_SHARED) return -EINVAL;
  if (off & (layout::kPageSize - 1)) return -EINVAL;
  // Shared anonymous memory: frames of its own, which a fork shares with the
  // child (AddressSpace::copy_from).
  if (flags & MAP_ANONYMOUS) return p.as->map(addr, len, prot, flags);
  FdEntry* e = p.fds.get(fd);
  if (!e) return -EBADF;
  if (e->kind == FdKind::kProcFds) return -ENODEV;  // a directory
  if (type == MAP_SHARED && (prot & PROT_WRITE)) {
    p.log_once(2000 + SYS_mmap, "writable MAP_SHARED file mappings are not supported (ENODEV)");
    return -ENODEV;
  }
  // A file with held writes (output commit) is read only after their release.
  if (e->kind == FdKind::kFile && p.out->must_wait(e->host_fd)) return kWaitForRelease;
  // A private copy of the file's bytes: exact for MAP_PRIVATE and for
  // read-only shared mappings of files nobody else writes.
  int64_t at = p.as->map(addr, len, prot | PROT_WRITE, flags & ~MAP_SHARED);
  if (at < 0) return at;
  std::vector<iovec> iov;
  if (!p.as->gather(at, len, true, iov)) return -EFAULT;
  ssize_t n = preadv(e->host_fd, iov.data(), static_cast<int>(iov.size()), static_cast<off_t>(off));
  if (n < 0) {
    int err = errno;
    p.as->unmap(at, len);
    return -err;
  }
  p.as->note_written(iov, n);
  if (!(prot & PROT_WRITE)) p.as->protect(at, layout::page_up(len), prot);
  return at;
}

int64_t sys_munmap(Process& p, const SyscallArgs& a) { return p.as->unmap(a.a[0], a.a[1]); }
int64_t sys_mprotect(Process& p, const SyscallArgs& a) {
  return p.as->protect(a.a[0], a.a[1], static_cast<int>(a.a[2]));
}

int64_t sys_mremap(Process& p, const SyscallArgs& a) {
  return p.as->remap(a.a[0], a.a[1], a.a[2], static_cast<int>(a.a[3]), a.a[4]);
}

int64_t sys_madvise(Process& p, const SyscallArgs& a) {
  // MADV_DONTNEED on private anonymous memory must read back as zeros.
  if (static_cast<int>(a.a[2]) == MADV_DONTNEED) return p.as->discard(a.a[0], a.a[1]);
  return 0;
}

const SyscallDef kDefs[] = {
    {SYS_brk, "brk", sys_brk},          {SYS_mmap, "mmap", sys_mmap},
    {SYS_munmap, "munmap", sys_munmap}, {SYS_mprotect, "mprotect", sys_mprotect},
    {SYS_mremap, "mremap", sys_mremap}, {SYS_madvise, "madvise", sys_madvise},
};

}  // namespace

std::span<const SyscallDef> memory_syscalls() { return kDefs; }

}  // namespace vmha
