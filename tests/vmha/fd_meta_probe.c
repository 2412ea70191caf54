/* fd_meta_probe: tries to change the size, mode and times of files behind
   descriptors it did not open (stdin and stdout, which the test points at
   files outside the working directory, and /dev/null), to change the status
   flags of stdin, and then the same on a file it created itself. Prints one
   line per call to stderr, "<call>: ok" or "<call>: <errno name>", then
   writes "after\n" to stdout. /dev/null gets the mode it already has, so the
   probe changes nothing on a VMM that lets it through. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void report(const char *call, int rc) {
  int e = errno;
  const char *name = rc >= 0       ? "ok"
                     : e == EPERM  ? "EPERM"
                     : e == EINVAL ? "EINVAL"
                     : e == EBADF  ? "EBADF"
                                   : strerror(e);
  dprintf(2, "%s: %s\n", call, name);
}

int main(void) {
  struct timespec epoch[2] = {{1, 0}, {1, 0}};
  report("ftruncate 1", ftruncate(1, 0));
  report("ftruncate 0", ftruncate(0, 0));
  report("fchmod 0", fchmod(0, 06777));
  report("fchmod 1", fchmod(1, 06777));
  report("futimens 0", futimens(0, epoch));
  report("futimens 1", futimens(1, epoch));
  report("ftruncate dup of 1", ftruncate(dup(1), 0));
  int null = open("/dev/null", O_RDWR);
  report("fchmod /dev/null", fchmod(null, 0666));
  report("futimens /dev/null", futimens(null, NULL));
  report("ftruncate /dev/null", ftruncate(null, 0));

  report("setfl 0", fcntl(0, F_SETFL, O_NONBLOCK | O_APPEND));
  int fl = fcntl(0, F_GETFL);
  errno = EINVAL;
  report("getfl 0 has O_NONBLOCK", fl >= 0 && (fl & O_NONBLOCK) ? 0 : -1);
  char c;
  report("read 0", (int)read(0, &c, 1));

  int own = open("own.txt", O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (own < 0 || write(own, "0123456789", 10) != 10) return 1;
  report("ftruncate own", ftruncate(own, 4));
  report("fchmod own", fchmod(own, 0640));
  report("futimens own", futimens(own, epoch));
  return write(1, "after\n", 6) == 6 ? 0 : 1;
}
