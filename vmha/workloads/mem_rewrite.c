/* mem_rewrite MIB PERCENT SECONDS: touches MIB MiB, then every second
   rewrites PERCENT% of its pages (a different stretch each second) and
   prints "second S: N pages rewritten, checksum C", for SECONDS seconds.
   The large-guest replication series (contrib/vmha-large). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  long mib = argc > 1 ? atol(argv[1]) : 1024, pct = argc > 2 ? atol(argv[2]) : 10,
       secs = argc > 3 ? atol(argv[3]) : 60;
  const long pages = mib * 256, per_second = pages * pct / 100;
  unsigned char *mem = malloc((size_t)pages * 4096);
  if (!mem) return 1;
  for (long p = 0; p < pages; ++p) mem[p * 4096] = (unsigned char)p;
  uint64_t sum = 0;
  long at = 0;
  for (long s = 1; s <= secs; ++s) {
    const double end = now() + 1.0;
    long done = 0;
    /* The second's share in slices, so a slow guest still keeps to the clock. */
    while (done < per_second && now() < end) {
      for (long k = 0; k < 256 && done < per_second; ++k, ++done) {
        long p = (at = (at + 7919) % pages);
        mem[p * 4096 + (s % 4096)] ^= (unsigned char)s;
        sum = sum * 31 + mem[p * 4096];
      }
    }
    while (now() < end) {
      struct timespec nap = {0, 1000000};
      nanosleep(&nap, NULL);
    }
    printf("second %ld: %ld pages rewritten, checksum %llu\n", s, done, (unsigned long long)sum);
    fflush(stdout);
  }
  return 0;
}
