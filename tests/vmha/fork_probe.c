/* Guest processes: fork, wait4/waitid status, SIGCHLD, kill of a child,
 * process groups, vfork + execve, execve errors, pipes between processes.
 * Prints one line per check, the same natively and under vmha.
 *   fork_probe            all checks (execs itself as "fork_probe child N")
 *   fork_probe child N    exits with N
 *   fork_probe pipeline N a writer child and a reader child joined by a
 *                         pipe, N lines; the parent prints the reader's sum
 *   fork_probe shared     parent and child write to one open file (opened
 *                         before the fork, and a dup of it): lines 1..4 in
 *                         order, one offset; the child's getppid() marks
 *                         where the test checkpoints
 *   fork_probe sharedmem  MAP_SHARED|MAP_ANONYMOUS memory across fork: the
 *                         child's 1000 increments show in the parent; a
 *                         second region the parent unmaps stays the child's;
 *                         the child's getppid() marks a checkpoint
 *   fork_probe sharedlines N  a child computes and prints N lines, adding
 *                         into MAP_SHARED memory; the parent, once the
 *                         child ended, prints what it reads there (for
 *                         failover tests: a takeover keeps the memory shared)
 *   fork_probe readonly   a private page made read-only before a fork, made
 *                         writable and written by each side after it: each
 *                         sees only its own write; the child's getppid()
 *                         marks a checkpoint */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t chld;
static void on_chld(int s) {
  (void)s;
  chld++;
}

static int pipeline(long n) {
  int fds[2];
  if (pipe(fds) != 0) return 1;
  pid_t w = fork();
  if (w == 0) {
    close(fds[0]);
    FILE* f = fdopen(fds[1], "w");
    for (long i = 1; i <= n; ++i) fprintf(f, "%ld\n", i);
    fclose(f);
    _exit(0);
  }
  int sums[2];
  if (pipe(sums) != 0) return 1;
  pid_t r = fork();
  if (r == 0) {
    close(fds[1]);
    close(sums[0]);
    FILE* f = fdopen(fds[0], "r");
    long v, total = 0, count = 0;
    while (fscanf(f, "%ld", &v) == 1) total += v, count++;
    dprintf(sums[1], "%ld %ld", count, total);
    _exit(0);
  }
  close(fds[0]);
  close(fds[1]);
  close(sums[1]);
  char buf[64] = {0};
  ssize_t got = read(sums[0], buf, sizeof buf - 1);
  int st1, st2;
  waitpid(w, &st1, 0);
  waitpid(r, &st2, 0);
  printf("pipeline: %s (read %d) writer=%d reader=%d\n", buf, got > 0, WEXITSTATUS(st1), WEXITSTATUS(st2));
  return 0;
}

static int shared_offset(void) {
  int fd = open("shared.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int fd2 = dup(fd);
  if (fd < 0 || fd2 < 0 || write(fd, "1\n", 2) != 2) return 1;
  pid_t c = fork();
  if (c == 0) {
    if (write(fd, "2\n", 2) != 2) _exit(2);
    getppid(); /* checkpoint */
    _exit(write(fd, "3\n", 2) == 2 ? 0 : 3);
  }
  int st;
  waitpid(c, &st, 0);
  if (write(fd2, "4\n", 2) != 2) return 4;
  close(fd);
  close(fd2);
  char buf[64] = {0};
  int in = open("shared.txt", O_RDONLY);
  ssize_t n = read(in, buf, sizeof buf - 1);
  close(in);
  for (ssize_t i = 0; i < n; ++i)
    if (buf[i] == '\n') buf[i] = ' ';
  printf("shared offset: %s(child %d)\n", buf, WEXITSTATUS(st));
  return 0;
}

static int shared_memory(void) {
  long* counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char* other = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (counter == MAP_FAILED || other == MAP_FAILED) return 1;
  memset(other, 'p', 8192);
  int go[2];
  if (pipe(go) != 0) return 1;
  pid_t c = fork();
  if (c == 0) {
    char b;
    if (read(go[0], &b, 1) != 1) _exit(2); /* the parent has unmapped `other` */
    for (int i = 0; i < 500; ++i) counter[0]++;
    getppid(); /* checkpoint */
    for (int i = 0; i < 500; ++i) counter[0]++;
    int same = 1;
    for (int i = 0; i < 8192; ++i) same &= other[i] == 'p';
    memset(other, 'c', 8192);
    counter[1] = same && other[8191] == 'c';
    _exit(0);
  }
  munmap(other, 8192);
  if (write(go[1], "g", 1) != 1) return 3;
  int st;
  waitpid(c, &st, 0);
  printf("shared memory: %ld increments seen, unmapped region kept for the child: %s (child %d)\n", counter[0],
         counter[1] ? "yes" : "no", WEXITSTATUS(st));
  return 0;
}

static int shared_lines(long n) {
  long* s = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (s == MAP_FAILED) return 1;
  setvbuf(stdout, NULL, _IOLBF, 0);
  pid_t c = fork();
  if (c == 0) {
    for (long i = 1; i <= n; ++i) {
      volatile long x = 0;
      for (long k = 0; k < 200000; ++k) x += k ^ i;
      s[(i * 7919) % 131072] += i;
      s[0] += 1;
      printf("child line %ld %ld\n", i, s[0]);
    }
    _exit(0);
  }
  int st;
  waitpid(c, &st, 0);
  long sum = 0;
  for (long i = 0; i < 131072; ++i) sum += s[i] * (i + 1);
  printf("parent reads %ld lines, checksum %ld (child %d)\n", s[0], sum, WEXITSTATUS(st));
  return 0;
}

static int read_only_pages(void) {
  char* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 1;
  page[0] = 'a';
  if (mprotect(page, 4096, PROT_READ) != 0) return 1;
  int go[2], done[2];
  if (pipe(go) != 0 || pipe(done) != 0) return 1;
  pid_t c = fork();
  if (c == 0) {
    getppid(); /* checkpoint */
    if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0) _exit(2);
    page[0] = 'c';
    char b = 'x';
    if (write(done[1], &b, 1) != 1 || read(go[0], &b, 1) != 1) _exit(3);
    _exit(page[0] == 'c' ? 0 : 4); /* the parent's write did not reach it */
  }
  char b;
  if (read(done[0], &b, 1) != 1) return 5;
  char seen = page[0]; /* the child's write must not show here */
  if (mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0) return 6;
  page[0] = 'p';
  if (write(go[1], "g", 1) != 1) return 7;
  int st;
  waitpid(c, &st, 0);
  printf("read-only page after fork: parent saw %c, then wrote %c; child kept its own (child %d)\n", seen, page[0],
         WEXITSTATUS(st));
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 2 && strcmp(argv[1], "child") == 0) return atoi(argv[2]);
  if (argc > 2 && strcmp(argv[1], "pipeline") == 0) return pipeline(atol(argv[2]));
  if (argc > 1 && strcmp(argv[1], "shared") == 0) return shared_offset();
  if (argc > 1 && strcmp(argv[1], "sharedmem") == 0) return shared_memory();
  if (argc > 1 && strcmp(argv[1], "readonly") == 0) return read_only_pages();
  if (argc > 2 && strcmp(argv[1], "sharedlines") == 0) return shared_lines(atol(argv[2]));
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &sa, NULL);

  int st = 0;
  pid_t me = getpid();
  pid_t c = fork();
  if (c == 0) _exit(getppid() == me ? 7 : 8);
  pid_t w = waitpid(c, &st, 0);
  printf("fork: waited=%d exited=%d code=%d\n", w == c, WIFEXITED(st), WEXITSTATUS(st));
  while (!chld) pause();
  printf("sigchld: handled=%d\n", chld > 0);

  c = fork();
  if (c == 0) {
    for (;;) pause();
  }
  printf("kill: %d\n", kill(c, SIGTERM));
  w = waitpid(c, &st, 0);
  printf("killed: signaled=%d sig=%d\n", WIFSIGNALED(st), WTERMSIG(st));

  c = fork();
  if (c == 0) _exit(3);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  printf("waitid: %d", waitid(P_PID, c, &si, WEXITED));
  printf(" pid=%d code=%d status=%d\n", si.si_pid == c, si.si_code == CLD_EXITED, si.si_status);

  w = waitpid(-1, &st, WNOHANG);
  printf("echild: %d errno=%s\n", w, errno == ECHILD ? "ECHILD" : strerror(errno));
  c = fork();
  if (c == 0) {
    pause();
    _exit(0);
  }
  printf("wnohang: %d\n", waitpid(c, &st, WNOHANG));
  kill(c, SIGKILL);
  waitpid(c, &st, 0);
  printf("sigkill: sig=%d\n", WTERMSIG(st));

  c = fork();
  if (c == 0) {
    setpgid(0, 0);
    _exit(getpgrp() == getpid() ? 0 : 1);
  }
  waitpid(c, &st, 0);
  printf("setpgid: child leads its group=%d same session=%d\n", WEXITSTATUS(st) == 0, getsid(0) == getsid(0));

  c = vfork();
  if (c == 0) {
    char* args[] = {argv[0], "child", "42", NULL};
    execv(argv[0], args);
    _exit(127);
  }
  waitpid(c, &st, 0);
  printf("vfork+exec: code=%d\n", WEXITSTATUS(st));

  c = fork();
  if (c == 0) {
    char* args[] = {"missing", NULL};
    execv("./no-such-program", args);
    _exit(errno == ENOENT ? 20 : 21);
  }
  waitpid(c, &st, 0);
  printf("exec of a missing file: ENOENT=%d\n", WEXITSTATUS(st) == 20);

  c = fork();
  if (c == 0) {
    char* args[] = {"echo", "exec'd", "echo", NULL};
    execv("/usr/bin/echo", args);
    _exit(127);
  }
  waitpid(c, &st, 0);
  printf("dynamic exec: code=%d\n", WEXITSTATUS(st));
  return pipeline(20000);
}
