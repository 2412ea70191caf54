/* remap_probe: a guest that changes its mappings the way malloc does (mremap
   moves, munmap then a new mapping at the same address, mprotect) and checks
   that every address then reaches the right frame. KVM here shadows the guest
   page tables; if it kept a translation the VMM removed, a new mapping at an
   old address would reach a frame now used elsewhere.
   Exit 0: all checks passed; 1-9: which check failed.
   With argument "ro": writes to a page made read-only; must die by SIGSEGV. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>

#define PAGES 64
#define LEN (PAGES * 4096ul)

static int all(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return 0;
  return 1;
}

static unsigned char *map(void *hint) {
  void *p = mmap(hint, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? 0 : p;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "ro") == 0) {
    volatile unsigned char *d = map(0);
    d[0] = 1;
    if (mprotect((void *)d, LEN, PROT_READ) != 0) return 8;
    d[0] = 2; /* must fault */
    return 9;
  }
  for (int round = 0; round < 20; ++round) {
    /* mremap moves p: the old address must not reach the moved frames. */
    unsigned char *p = map(0), *guard = map(p + LEN);
    if (!p || !guard) return 1;
    memset(p, 0x11, LEN);
    unsigned char *q = mremap(p, LEN, 2 * LEN, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return 1;
    unsigned char *r = map(p);
    if (!r) return 1;
    memset(r, 0x22, LEN);
    if (!all(q, LEN, 0x11)) return 2;
    if (!all(r, LEN, 0x22)) return 3;

    /* munmap a, its frames go to c; a new mapping b at a's address is zero. */
    unsigned char *a = map(0);
    if (!a) return 1;
    memset(a, 0xaa, LEN);
    munmap(a, LEN);
    unsigned char *c = map((void *)0x200000000000ul);
    if (!c) return 1;
    memset(c, 0xcc, LEN);
    unsigned char *b = map(a);
    if (!b) return 1;
    if (!all(b, LEN, 0)) return 4;
    memset(b, 0xbb, LEN);
    if (!all(c, LEN, 0xcc)) return 5;
    munmap(b, LEN);
    munmap(c, LEN);
    munmap(q, 2 * LEN);
    munmap(r, LEN);
    munmap(guard, LEN);
  }
  return 0;
}
