/* page_writer: ROUNDS rounds of writing one byte to each of PAGES pages, a
   getppid() after each round as a step marker (the bench harvests the dirty
   log there), so every round pays one first-write fault per page. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long pages = argc > 1 ? atol(argv[1]) : 4096, rounds = argc > 2 ? atol(argv[2]) : 50;
  volatile char *buf = malloc((size_t)pages * 4096 + 4096);
  if (!buf) return 1;
  for (long r = 0; r < rounds; ++r) {
    for (long p = 0; p < pages; ++p) buf[p * 4096] = (char)r;
    syscall(SYS_getppid);
  }
  return 0;
}
