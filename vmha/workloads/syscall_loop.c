/* syscall_loop: N cheap system calls (getppid), for the round-trip cost. */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += syscall(SYS_getppid) > 0;
  return sum == n ? 0 : 1;
}
