// Memory system calls: brk, mmap (anonymous, private file mappings copied
// in, shared ones written back: shared_file_maps.h), munmap, mprotect,
// mremap, madvise, msync; mlock and friends (guest memory is never paged
// out by the guest's kernel: nothing to do), mincore (all resident), and
// the NUMA calls answered as a kernel without NUMA does (ENOSYS, quietly).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "vmha/common/iov_io.h"
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
  // Writable and shared: frames the guest's processes share, written back
  // to the file (shared_file_maps.h). Linux asks for a descriptor open for
  // reading and writing.
  const bool write_back = type == MAP_SHARED && (prot & PROT_WRITE);
  if (write_back && (e->kind != FdKind::kFile || (e->open_flags & O_ACCMODE) != O_RDWR))
    return e->kind == FdKind::kReadOnly ? -EACCES : (e->kind == FdKind::kFile ? -EACCES : -ENODEV);
  // A file with held writes (output commit) is read only after their release.
  if (e->kind == FdKind::kFile && p.out->must_wait(e->host_fd)) return kWaitForRelease;
  // A private copy of the file's bytes: exact for MAP_PRIVATE and for
  // read-only shared mappings of files nobody else writes.
  int64_t at = p.as->map(addr, len, prot | PROT_WRITE,
                         write_back ? (flags & ~MAP_TYPE) | MAP_SHARED | MAP_ANONYMOUS : flags & ~MAP_SHARED);
  if (at < 0) return at;
  std::vector<iovec> iov;
  if (!p.as->gather(at, len, true, iov)) return -EFAULT;
  ssize_t n = read_pieces(e->host_fd, iov, static_cast<off_t>(off));
  if (n < 0) {
    int err = errno;
    p.as->unmap(at, len);
    return -err;
  }
  p.as->note_written(iov, n);
  if (write_back) {
    p.shared_files.forget(static_cast<uint64_t>(at), len);  // MAP_FIXED over an older one
    if (int rc = p.shared_files.add(static_cast<uint64_t>(at), len, e->host_fd, static_cast<off_t>(off), e->path)) {
      p.as->unmap(at, len);
      return rc;
    }
  }
  if (!(prot & PROT_WRITE)) p.as->protect(at, layout::page_up(len), prot);
  return at;
}

int64_t sys_munmap(Process& p, const SyscallArgs& a) {
  if (!p.shared_files.empty()) {
    p.shared_files.write_back(p, a.a[0], a.a[1]);
    p.shared_files.forget(a.a[0], a.a[1]);
  }
  return p.as->unmap(a.a[0], a.a[1]);
}

// msync: the changes of a shared file mapping reach the file (its pages are
// the guest's memory already; nothing else to flush).
int64_t sys_msync(Process& p, const SyscallArgs& a) {
  if (a.a[0] & (layout::kPageSize - 1)) return -EINVAL;
  if (a.a[2] & ~uint64_t(MS_ASYNC | MS_SYNC | MS_INVALIDATE)) return -EINVAL;
  p.shared_files.write_back(p, a.a[0], a.a[1]);
  return 0;
}
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

int64_t sys_mlock(Process&, const SyscallArgs&) { return 0; }

int64_t sys_mincore(Process& p, const SyscallArgs& a) {
  if (a.a[0] & (layout::kPageSize - 1)) return -EINVAL;
  if (!layout::rounds_up(a.a[1])) return -ENOMEM;
  const uint64_t pages = layout::page_up(a.a[1]) / layout::kPageSize;
  std::vector<iovec> unused;
  if (pages && !p.as->gather(a.a[0], pages * layout::kPageSize, false, unused)) return -ENOMEM;
  std::vector<unsigned char> resident(pages, 1);
  return p.as->copy_out(a.a[2], resident.data(), pages) ? 0 : -EFAULT;
}

int64_t sys_no_numa(Process&, const SyscallArgs&) { return -ENOSYS; }

const SyscallDef kDefs[] = {
    {SYS_mlock, "mlock", sys_mlock},    {SYS_munlock, "munlock", sys_mlock},
    {SYS_mlock2, "mlock2", sys_mlock},  {SYS_mlockall, "mlockall", sys_mlock},
    {SYS_munlockall, "munlockall", sys_mlock}, {SYS_mincore, "mincore", sys_mincore},
    {SYS_get_mempolicy, "get_mempolicy", sys_no_numa}, {SYS_set_mempolicy, "set_mempolicy", sys_no_numa},
    {SYS_mbind, "mbind", sys_no_numa},
    {SYS_brk, "brk", sys_brk},          {SYS_mmap, "mmap", sys_mmap},
    {SYS_munmap, "munmap", sys_munmap}, {SYS_mprotect, "mprotect", sys_mprotect},
    {SYS_mremap, "mremap", sys_mremap}, {SYS_madvise, "madvise", sys_madvise},
    {SYS_msync, "msync", sys_msync},
};

}  // namespace

std::span<const SyscallDef> memory_syscalls() { return kDefs; }

}  // namespace vmha
