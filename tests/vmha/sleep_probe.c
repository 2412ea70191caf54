/* sleep_probe N MS: N sleeps of MS milliseconds each with the nanosleep
   system call, then N with clock_nanosleep (relative, CLOCK_MONOTONIC), then
   N absolute ones (TIMER_ABSTIME), all as raw system calls (glibc turns
   nanosleep into clock_nanosleep). Prints how many returned EINTR and the
   elapsed time, for the test that pauses the VM throughout.
   sleep_probe N MS until: each kind of sleep goes on past N until the file
   stop.K (K = 0, 1, 2 for the three kinds) exists in the working directory,
   so that the test decides when enough pauses have cut them; prints the
   number of sleeps too.
   sleep_probe N MS io: N polls of stdin (a pipe nobody writes yet) with an
   MS timeout, then one blocking read of a byte from it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Another sleep of kind k: fewer than n so far, or (until) no stop.k yet. */
static int go_on(int k, int i, int n, int until) {
  char stop[] = "stop.0";
  stop[5] = (char)('0' + k);
  return i < n || (until && access(stop, F_OK) != 0);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  long ms = argc > 2 ? atol(argv[2]) : 100;
  struct timespec req = {ms / 1000, (ms % 1000) * 1000000}, t0;
  int eintr[3] = {0, 0, 0};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const char *mode = argc > 3 ? argv[3] : "";
  int until = strcmp(mode, "until") == 0, sleeps = 0;
  if (strcmp(mode, "io") == 0) {
    int poll_eintr = 0, ready = 0, read_eintr = 0;
    for (int i = 0; i < n; ++i) {
      struct pollfd p = {0, POLLIN, 0};
      long r = syscall(SYS_poll, &p, 1, (int)ms);
      if (r < 0 && errno == EINTR) ++poll_eintr;
      if (r > 0) ++ready;
    }
    long poll_ms = ms_since(&t0);
    char c;
    long got;
    while ((got = syscall(SYS_read, 0, &c, 1)) < 0 && errno == EINTR) ++read_eintr;
    printf("poll_eintr=%d poll_ready=%d poll_ms=%ld read=%ld read_eintr=%d\n", poll_eintr, ready, poll_ms, got,
           read_eintr);
    return 0;
  }
  for (int i = 0; go_on(0, i, n, until); ++i, ++sleeps)
    if (syscall(SYS_nanosleep, &req, NULL) != 0 && errno == EINTR) ++eintr[0];
  for (int i = 0; go_on(1, i, n, until); ++i, ++sleeps)
    if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL) != 0 && errno == EINTR) ++eintr[1];
  for (int i = 0; go_on(2, i, n, until); ++i, ++sleeps) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += req.tv_sec;
    at.tv_nsec += req.tv_nsec;
    if (at.tv_nsec >= 1000000000) at.tv_sec += 1, at.tv_nsec -= 1000000000;
    if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0 && errno == EINTR) ++eintr[2];
  }
  printf("nanosleep_eintr=%d clock_nanosleep_eintr=%d abstime_eintr=%d elapsed_ms=%ld sleeps=%d\n", eintr[0], eintr[1],
         eintr[2], ms_since(&t0), sleeps);
  return 0;
}
