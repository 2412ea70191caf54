/* mem_edge_probe: memory calls at the edges. Lengths far beyond the guest's
   memory, lengths whose page round-up overflows, ranges that wrap around
   the top of the address space and a break past user space must each fail
   cleanly (or, for munmap/madvise of a huge empty range, succeed on nothing)
   and leave the guest running. Prints "<check>: ok" or "<check>: FAIL (...)"
   per check on stdout; exits 0 when all passed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TIB (1ul << 40)
#define PAGE 4096ul
#define TOP_PAGE ((void *)0xfffffffffffff000ul) /* its end wraps to 0 */
#define EMPTY ((void *)(16 * TIB))              /* nothing is mapped at 16-80 TiB */

static int failed;

static void check(const char *what, int ok, long got) {
  int e = errno;
  if (ok)
    printf("%s: ok\n", what);
  else
    printf("%s: FAIL (returned %#lx, errno %d)\n", what, (unsigned long)got, e);
  fflush(stdout);
  failed |= !ok;
}

static int mmap_fails(void *addr, size_t len, int prot, int flags, int err) {
  errno = 0;
  void *p = mmap(addr, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) munmap(p, len);
  return p == MAP_FAILED && errno == err;
}

int main(void) {
  static char data[64] = "still here";
  long cur = syscall(SYS_brk, 0);
  long r = syscall(SYS_brk, -1l);
  check("brk(-1) keeps the break", r == cur, r);
  r = syscall(SYS_brk, cur + (1l << 46));
  check("brk(+64 TiB) keeps the break", r == cur, r);
  r = syscall(SYS_brk, cur + PAGE);
  check("brk still grows", r == cur + (long)PAGE, r);
  if (r == cur + (long)PAGE) *(volatile char *)cur = 1;

  const int rw = PROT_READ | PROT_WRITE;
  check("mmap 64 TiB: ENOMEM", mmap_fails(NULL, 64 * TIB, rw, 0, ENOMEM), 0);
  check("mmap 64 TiB PROT_NONE: ENOMEM", mmap_fails(NULL, 64 * TIB, PROT_NONE, 0, ENOMEM), 0);
  check("mmap SIZE_MAX: ENOMEM", mmap_fails(NULL, SIZE_MAX, rw, 0, ENOMEM), 0);
  check("MAP_FIXED at the top page: ENOMEM", mmap_fails(TOP_PAGE, PAGE, rw, MAP_FIXED, ENOMEM), 0);
  check("MAP_FIXED across the user top: ENOMEM",
        mmap_fails((void *)(0x800000000000ul - PAGE), 2 * PAGE, rw, MAP_FIXED, ENOMEM), 0);
  char *h = mmap(TOP_PAGE, PAGE, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  check("hint at the top page: placed in user space",
        h != MAP_FAILED && (uintptr_t)h + PAGE > (uintptr_t)h && (uintptr_t)h + PAGE <= 0x800000000000ul, (long)h);

  char *m = mmap(NULL, 16 * PAGE, rw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 2;
  memset(m, 0x5a, 16 * PAGE);
  errno = 0;
  r = mprotect(m, SIZE_MAX, PROT_READ);
  check("mprotect SIZE_MAX: ENOMEM", r == -1 && errno == ENOMEM, r);
  errno = 0;
  r = mprotect(m, 64 * TIB, PROT_READ);
  check("mprotect 64 TiB: ENOMEM", r == -1 && errno == ENOMEM, r);
  errno = 0;
  r = madvise(m, SIZE_MAX, MADV_DONTNEED);
  check("madvise SIZE_MAX: EINVAL", r == -1 && errno == EINVAL, r);
  errno = 0;
  r = madvise(EMPTY, 64 * TIB, MADV_DONTNEED);
  check("madvise 64 TiB of nothing returns", r == 0 || errno == ENOMEM, r);
  errno = 0;
  r = munmap(m, SIZE_MAX);
  check("munmap SIZE_MAX: EINVAL", r == -1 && errno == EINVAL, r);
  errno = 0;
  r = munmap(TOP_PAGE, PAGE);
  check("munmap at the top page: EINVAL", r == -1 && errno == EINVAL, r);
  errno = 0;
  r = munmap(EMPTY, 64 * TIB);
  check("munmap 64 TiB of nothing: 0", r == 0, r);
  errno = 0;
  void *q = mremap(m, PAGE, 64 * TIB, MREMAP_MAYMOVE);
  check("mremap to 64 TiB: ENOMEM", q == MAP_FAILED && errno == ENOMEM, (long)q);
  errno = 0;
  q = mremap(m, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, TOP_PAGE);
  check("mremap to the top page: EINVAL", q == MAP_FAILED && errno == EINVAL, (long)q);
  errno = 0;
  q = mremap(m, SIZE_MAX, PAGE, 0);
  check("mremap from SIZE_MAX: EINVAL", q == MAP_FAILED && errno == EINVAL, (long)q);

  check("mapping kept its data", m[0] == 0x5a && m[16 * PAGE - 1] == 0x5a, m[0]);
  check("static data intact", strcmp(data, "still here") == 0, 0);
  return failed;
}
