/* unlink_probe: a temporary file as sort uses one: created, written, unlinked
   while open, written again, read back. getppid() marks the points where the
   test checkpoints (before the unlink, after it). Prints what it observed:
   the name gone, a new file of that name, the listing without the holding
   directory, the open file's size and contents; removes the new file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  const char *name = "spill.tmp";
  int fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || write(fd, "one\n", 4) != 4) return 2;
  getppid(); /* checkpoint: the file open by its name */
  if (unlink(name) != 0) {
    printf("unlink: %s\n", strerror(errno));
    return 3;
  }
  if (write(fd, "two\n", 4) != 4) return 4;
  getppid(); /* checkpoint: unlinked, still open */
  struct stat st;
  printf("stat after unlink: %s\n", stat(name, &st) == 0 ? "found" : strerror(errno));
  int again = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  printf("new file of that name: %s\n", again >= 0 && write(again, "new\n", 4) == 4 ? "ok" : strerror(errno));
  if (again >= 0) close(again);
  DIR *d = opendir(".");
  int seen = 0, held = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    seen += !strcmp(e->d_name, name);
    held += !strncmp(e->d_name, ".vmha", 5);
  }
  if (d) closedir(d);
  printf("listing: %d %s, %d hidden entries\n", seen, name, held);
  if (fstat(fd, &st) != 0) return 5;
  printf("fstat size: %lld\n", (long long)st.st_size);
  char buf[64] = {0};
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  printf("contents: %s", n > 0 ? buf : "(none)\n");
  close(fd);
  /* Gone again, so that a run resumed from a checkpoint finds the names as
     they were (vmha applies file-system changes at once). */
  printf("removed again: %s\n", unlink(name) == 0 ? "ok" : strerror(errno));
  return 0;
}
