/* confine_probe: tries to reach paths inside and outside its working
   directory and prints one line per attempt (errno names, no addresses), plus
   an unsupported system call. The test compares the lines with what
   confinement must give. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void try_open(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd >= 0) {
    printf("open %s: ok\n", path);
    close(fd);
  } else
    printf("open %s: %s\n", path, errno == EACCES ? "EACCES" : errno == ENOENT ? "ENOENT" : strerror(errno));
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) try_open(argv[i]);
  struct stat st;
  printf("stat ../: %s\n", stat("..", &st) == 0 ? "ok" : errno == EACCES ? "EACCES" : strerror(errno));
  int fd = open("created.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  printf("create inside: %s\n", fd >= 0 && write(fd, "x\n", 2) == 2 ? "ok" : strerror(errno));
  if (fd >= 0) close(fd);
  printf("unlink ../victim: %s\n", unlink("../victim") == 0 ? "ok" : errno == EACCES ? "EACCES" : strerror(errno));
  printf("rename out: %s\n", rename("created.txt", "../moved.txt") == 0 ? "ok"
                             : errno == EACCES                          ? "EACCES"
                                                                        : strerror(errno));
  long r = syscall(999);
  printf("syscall 999: %s\n", r == -1 && errno == ENOSYS ? "ENOSYS" : "other");
  r = syscall(999);
  printf("syscall 999 again: %s\n", r == -1 && errno == ENOSYS ? "ENOSYS" : "other");
  r = syscall(SYS_ptrace, -1, 0, 0, 0);
  printf("ptrace: %s\n", r == -1 && errno == ENOSYS ? "ENOSYS" : "other");
  return 0;
}
