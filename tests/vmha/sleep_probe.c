/* sleep_probe N MS: N sleeps of MS milliseconds each with the nanosleep
   system call, then N with clock_nanosleep (relative, CLOCK_MONOTONIC), then
   N absolute ones (TIMER_ABSTIME), all as raw system calls (glibc turns
   nanosleep into clock_nanosleep). Prints how many returned EINTR and the
   elapsed time, for the test that pauses the VM throughout.
   sleep_probe N MS io: N polls of stdin (a pipe nobody writes yet) with an
   MS timeout, then one blocking read of a byte from it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  long ms = argc > 2 ? atol(argv[2]) : 100;
  struct timespec req = {ms / 1000, (ms % 1000) * 1000000}, t0;
  int eintr[3] = {0, 0, 0};
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (argc > 3) {
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
  for (int i = 0; i < n; ++i)
    if (syscall(SYS_nanosleep, &req, NULL) != 0 && errno == EINTR) ++eintr[0];
  for (int i = 0; i < n; ++i)
    if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL) != 0 && errno == EINTR) ++eintr[1];
  for (int i = 0; i < n; ++i) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_sec += req.tv_sec;
    at.tv_nsec += req.tv_nsec;
    if (at.tv_nsec >= 1000000000) at.tv_sec += 1, at.tv_nsec -= 1000000000;
    if (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0 && errno == EINTR) ++eintr[2];
  }
  printf("nanosleep_eintr=%d clock_nanosleep_eintr=%d abstime_eintr=%d elapsed_ms=%ld\n", eintr[0], eintr[1], eintr[2],
         ms_since(&t0));
  return 0;
}
