/* ro_probe: runs one file operation per argument, "OP:PATH" (rename:FROM:TO,
   at:DIR:PATH opens PATH relative to an fd of DIR), and prints "OP PATH: ok"
   or the errno's name (lines:PATH prints the file's lines, slowly). The test compares the lines with what the
   confinement policy must give (read-only paths, working directory, nothing
   else). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *name(int e) {
  static const struct {
    int e;
    const char *n;
  } names[] = {{EACCES, "EACCES"}, {ENOENT, "ENOENT"}, {EROFS, "EROFS"},     {EEXIST, "EEXIST"},
               {EBADF, "EBADF"},   {ELOOP, "ELOOP"},   {ENOTDIR, "ENOTDIR"}, {EISDIR, "EISDIR"},
               {EPERM, "EPERM"},   {EINVAL, "EINVAL"}, {EXDEV, "EXDEV"},     {EBUSY, "EBUSY"}};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i)
    if (names[i].e == e) return names[i].n;
  return strerror(e);
}

/* 0 or -errno */
static int rc(long r) { return r < 0 ? -errno : 0; }

static int read_file(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -errno;
  char buf[64];
  int r = read(fd, buf, sizeof buf) < 0 ? -errno : 0;
  close(fd);
  return r;
}

static int list_dir(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return -errno;
  char buf[4096];
  long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
  int r = n < 0 ? -errno : n == 0 ? -ENOENT : 0;
  close(fd);
  return r;
}

/* An operation on a descriptor opened read-only: fchmod, write, ftruncate. */
static int on_fd(const char *op, const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -errno;
  int r = 0;
  if (!strcmp(op, "fchmod")) r = rc(fchmod(fd, 0777));
  if (!strcmp(op, "fdwrite")) r = rc(write(fd, "x", 1));
  if (!strcmp(op, "ftruncate")) r = rc(ftruncate(fd, 0));
  close(fd);
  return r;
}

/* Prints the file's lines one by one, 10 ms apart, through a descriptor
   held open all along (a failover test kills the primary meanwhile). */
static int lines(const char *path) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -errno;
  char line[256];
  size_t n = 0;
  for (;;) {
    char c;
    ssize_t r = read(fd, &c, 1);
    if (r < 0) return -errno;
    if (r == 0) break;
    if (n < sizeof line) line[n++] = c;
    if (c == '\n') {
      if (write(1, line, n) != (ssize_t)n) return -errno;
      n = 0;
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  close(fd);
  return 1; /* nothing more to print */
}

static int run(const char *op, char *path) {
  struct stat st;
  char buf[256];
  if (!strcmp(op, "read")) return read_file(path);
  if (!strcmp(op, "lines")) return lines(path);
  if (!strcmp(op, "list")) return list_dir(path);
  if (!strcmp(op, "stat")) return rc(stat(path, &st));
  if (!strcmp(op, "lstat")) return rc(lstat(path, &st));
  if (!strcmp(op, "readlink")) return rc(readlink(path, buf, sizeof buf));
  if (!strcmp(op, "write")) {
    int fd = open(path, O_WRONLY);
    if (fd >= 0) close(fd);
    return fd < 0 ? -errno : 0;
  }
  if (!strcmp(op, "create") || !strcmp(op, "excl") || !strcmp(op, "trunc")) {
    int flags = !strcmp(op, "create") ? O_WRONLY | O_CREAT
                : !strcmp(op, "excl") ? O_RDONLY | O_CREAT | O_EXCL
                                      : O_RDONLY | O_TRUNC;
    int fd = open(path, flags, 0644);
    if (fd >= 0) close(fd);
    return fd < 0 ? -errno : 0;
  }
  if (!strcmp(op, "unlink")) return rc(unlink(path));
  if (!strcmp(op, "rmdir")) return rc(rmdir(path));
  if (!strcmp(op, "mkdir")) return rc(mkdir(path, 0755));
  if (!strcmp(op, "chmod")) return rc(chmod(path, 0777));
  if (!strcmp(op, "utime")) return rc(utimensat(AT_FDCWD, path, NULL, 0));
  if (!strcmp(op, "accessw")) return rc(access(path, W_OK));
  if (!strcmp(op, "accessr")) return rc(access(path, R_OK));
  if (!strcmp(op, "fchmod") || !strcmp(op, "fdwrite") || !strcmp(op, "ftruncate")) return on_fd(op, path);
  if (!strcmp(op, "rename") || !strcmp(op, "at")) {
    char *second = strchr(path, ':');
    if (!second) return -EINVAL;
    *second++ = 0;
    int r;
    if (!strcmp(op, "rename")) {
      r = rc(rename(path, second));
    } else {
      int dir = open(path, O_RDONLY | O_DIRECTORY);
      if (dir < 0) return -errno;
      int fd = openat(dir, second, O_RDONLY);
      r = fd < 0 ? -errno : 0;
      if (fd >= 0) close(fd);
      close(dir);
    }
    second[-1] = ':';
    return r;
  }
  return -EINVAL;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    char *colon = strchr(argv[i], ':');
    if (!colon) continue;
    *colon = 0;
    int r = run(argv[i], colon + 1);
    if (r > 0) continue;
    printf("%s %s: %s\n", argv[i], colon + 1, r == 0 ? "ok" : name(-r));
  }
  return 0;
}
