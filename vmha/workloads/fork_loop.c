/* fork_loop N [exec PROGRAM]: N times, fork a child that exits at once (or
   execs PROGRAM) and wait for it; prints the time per round. vmha bench's
   process-creation rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 100;
  const char *prog = argc > 3 && strcmp(argv[2], "exec") == 0 ? argv[3] : NULL;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      if (prog) execl(prog, prog, (char *)NULL);
      _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.1f us per round\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1e3);
  return 0;
}
