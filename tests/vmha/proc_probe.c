/* proc_probe: what a program reads of itself under /proc/self — exe, cwd,
   fd/N links (a file, a pipe, a closed descriptor), the fd directory
   (opendir, fstat, stat, a listing read in two parts), reopening a pipe by
   its fd link — printed as facts that hold natively and under vmha alike.
   getppid() between the two parts of the listing marks where the test
   checkpoints. Run by its canonical path (argv[0] is what exe must be).
   `proc_probe exec` execs /usr/bin/readlink /proc/self/exe. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *yes(int ok) { return ok ? "yes" : "NO"; }

static int link_is(const char *link, const char *want) {
  char buf[PATH_MAX];
  ssize_t n = readlink(link, buf, sizeof buf - 1);
  if (n < 0) return 0;
  buf[n] = 0;
  return strcmp(buf, want) == 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "exec") == 0) {
    execl("/usr/bin/readlink", "readlink", "/proc/self/exe", (char *)0);
    return 9;
  }
  /* argv[0]: the program's canonical path (the test passes it so). */
  const char *real = argv[0];
  char cwd[PATH_MAX], link[64];
  if (!getcwd(cwd, sizeof cwd)) return 2;
  printf("exe is the program: %s\n", yes(link_is("/proc/self/exe", real)));
  snprintf(link, sizeof link, "/proc/%d/exe", (int)getpid());
  printf("exe by pid: %s\n", yes(link_is(link, real)));
  printf("thread-self exe: %s\n", yes(link_is("/proc/thread-self/exe", real)));
  int self = open("/proc/self/exe", O_RDONLY);
  char magic[4] = {0};
  printf("exe opens as ELF: %s\n", yes(self >= 0 && read(self, magic, 4) == 4 && memcmp(magic, "\177ELF", 4) == 0));
  if (self >= 0) close(self);
  printf("cwd link: %s\n", yes(link_is("/proc/self/cwd", cwd)));

  int f = open("data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char want[PATH_MAX + 8];
  snprintf(want, sizeof want, "%s/data", cwd);
  snprintf(link, sizeof link, "/proc/self/fd/%d", f);
  printf("file link: %s\n", yes(f >= 0 && link_is(link, want)));
  int p[2];
  if (pipe(p) != 0) return 3;
  char buf[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", p[0]);
  ssize_t n = readlink(link, buf, sizeof buf);
  printf("pipe link: %s\n", yes(n > 6 && strncmp(buf, "pipe:[", 6) == 0));
  int again = open(link, O_RDONLY);
  char c = 0;
  printf("pipe reopened: %s\n", yes(again >= 0 && write(p[1], "x", 1) == 1 && read(again, &c, 1) == 1 && c == 'x'));
  printf("closed fd link: %s\n", readlink("/proc/self/fd/1000", buf, sizeof buf) < 0 ? strerror(errno) : "found");
  printf("readlink of a directory: %s\n", readlink("/proc/self/fd", buf, sizeof buf) < 0 ? strerror(errno) : "found");
  struct stat st;
  printf("fd dir stat: %s\n", yes(stat("/proc/self/fd", &st) == 0 && S_ISDIR(st.st_mode)));
  DIR *d = opendir("/proc/self/fd");
  printf("fd dir opendir: %s\n", yes(d != NULL && fstat(dirfd(d), &st) == 0 && S_ISDIR(st.st_mode)));
  if (d) closedir(d);

  /* The listing read in two parts, with a checkpoint between them. */
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
  if (dir < 0) {
    printf("fd dir open: %s\n", strerror(errno));
    return 4;
  }
  char part[4096];
  long got = syscall(SYS_getdents64, dir, part, 64);
  getppid(); /* checkpoint */
  long rest = got > 0 ? syscall(SYS_getdents64, dir, part + got, sizeof part - got) : -1;
  int listed[1024] = {0}, dots = 0, bad = 0;
  for (long at = 0; got > 0 && rest >= 0 && at < got + rest;) {
    struct dirent64 *e = (struct dirent64 *)(part + at);
    if (e->d_reclen == 0) break;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      dots++;
    else if (atoi(e->d_name) >= 0 && atoi(e->d_name) < 1024)
      listed[atoi(e->d_name)] = 1;
    else
      bad++;
    at += e->d_reclen;
  }
  int missing = 0, extra = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    int open_now = fcntl(fd, F_GETFD) >= 0;
    missing += open_now && !listed[fd];
    extra += !open_now && listed[fd];
  }
  printf("listing in two parts: %s\n", yes(got > 0 && rest > 0 && dots == 2 && !bad));
  printf("listing names every open descriptor: %s\n", yes(!missing && listed[f] && listed[p[0]] && listed[dir]));
  printf("listing names only open descriptors: %s\n", yes(!extra));
  printf("listing at its end: %s\n", yes(syscall(SYS_getdents64, dir, part, sizeof part) == 0));
  printf("read of the directory: %s\n", read(dir, part, 16) < 0 ? strerror(errno) : "data");
  printf("exe after the checkpoint: %s\n", yes(link_is("/proc/self/exe", real)));
  return 0;
}
