/* filelog: the file-writing workload (output commit of file writes). Writes
   `records` numbered 32-byte records into slot i of filelog.dat, by turns
   with lseek+write, pwrite and write on an O_APPEND descriptor, and every
   `batch` records checks its own view: fstat and lseek(SEEK_END) give the
   size written so far, a record read back (lseek+read, pread) is the one it
   wrote. Prints a line per batch and, at the end, a checksum of the file read
   back whole. Exit 0, or 1 with a message when a check failed.
   Usage: filelog RECORDS [BATCH [WORK [NOTIFY]]]
   WORK: pseudo-random word updates per record (time between writes).
   NOTIFY: a FIFO: after the first batch (before its checks) writes
   "wrote N\n" to it, then reads it until end of file: lets a test look at
   the host file while the writes are still held, then answer. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REC 32

static void record(char *buf, long i) { /* 31 characters and a newline */
  snprintf(buf, 64, "rec %08ld %018llx\n", i % 100000000, (unsigned long long)(i * 0x9e3779b97f4a7c15ull));
}

static int fail(const char *what, long i) {
  fprintf(stderr, "filelog: %s (record %ld)\n", what, i);
  return 1;
}

static uint64_t spin(long work, uint64_t x) {
  for (long k = 0; k < work; ++k) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

int main(int argc, char **argv) {
  long records = argc > 1 ? atol(argv[1]) : 1000;
  long batch = argc > 2 ? atol(argv[2]) : 100;
  long work = argc > 3 ? atol(argv[3]) : 1000;
  const char *notify = argc > 4 ? argv[4] : NULL;
  if (records < 1 || batch < 1) return fail("records and batch must be positive", 0);
  int fd = open("filelog.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
  int afd = open("filelog.dat", O_WRONLY | O_APPEND);
  if (fd < 0 || afd < 0) return fail("cannot open filelog.dat", 0);
  char buf[64], back[REC];
  uint64_t x = 88172645463325252ull;
  for (long i = 0; i < records; ++i) {
    x = spin(work, x);
    record(buf, i);
    ssize_t n;
    switch (i % 3) {
      case 0:
        if (lseek(fd, i * REC, SEEK_SET) != i * REC) return fail("lseek", i);
        n = write(fd, buf, REC);
        break;
      case 1:
        n = pwrite(fd, buf, REC, i * REC);
        break;
      default:
        n = write(afd, buf, REC);
        break; /* the end is slot i */
    }
    if (n != REC) return fail("short write", i);
    if ((i + 1) % batch && i + 1 != records) continue;
    if (notify && i + 1 == batch) {
      int nfd = open(notify, O_WRONLY);
      if (nfd < 0) return fail("cannot open the notify path", i);
      char line[64];
      int len = snprintf(line, sizeof line, "wrote %ld\n", (i + 1) * REC);
      if (write(nfd, line, len) != len) return fail("notify", i);
      close(nfd);
      /* Wait for the other side's answer (it looks at the file meanwhile). */
      nfd = open(notify, O_RDONLY);
      while (nfd >= 0 && read(nfd, line, sizeof line) > 0) {}
      if (nfd >= 0) close(nfd);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size != (i + 1) * REC) return fail("fstat size", i);
    if (stat("filelog.dat", &st) != 0 || st.st_size != (i + 1) * REC) return fail("stat size", i);
    if (lseek(afd, 0, SEEK_END) != (i + 1) * REC) return fail("lseek SEEK_END", i);
    long j = (i * 7919) % (i + 1);
    record(buf, j);
    if (lseek(fd, j * REC, SEEK_SET) != j * REC || read(fd, back, REC) != REC || memcmp(back, buf, REC))
      return fail("read back", j);
    if (pread(fd, back, REC, i * REC) != REC || (record(buf, i), memcmp(back, buf, REC))) return fail("pread back", i);
    printf("batch %ld ok: %ld records, read back %ld\n", (i + batch) / batch, i + 1, j);
    fflush(stdout);
  }
  /* The whole file, read back through a fresh descriptor. */
  close(fd);
  close(afd);
  fd = open("filelog.dat", O_RDONLY);
  uint64_t sum = 0;
  long total = 0;
  ssize_t n;
  while ((n = read(fd, back, REC)) > 0) {
    for (ssize_t k = 0; k < n; ++k) sum = sum * 131 + (unsigned char)back[k];
    total += n;
  }
  close(fd);
  if (total != records * REC) return fail("file size at the end", records);
  printf("checksum %016llx of %ld bytes (spin %016llx)\n", (unsigned long long)sum, total, (unsigned long long)x);
  return 0;
}
