/* steps: the fault-injection workload. Each step updates pseudo-random words
   over a few MiB and prints a numbered line carrying a running hash of memory;
   at the end it prints a checksum of all its memory. A run resumed on a backup
   must print every line once, in order, and the same checksum as a native run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 400;
  long work = argc > 2 ? atol(argv[2]) : 20000;                     /* word updates per step */
  size_t words = (argc > 3 ? strtoul(argv[3], NULL, 10) : 4) << 17; /* MiB -> 8-byte words */
  uint64_t *m = calloc(words, sizeof *m);
  if (!m) {
    fprintf(stderr, "steps: out of memory\n");
    return 1;
  }
  uint64_t x = 88172645463325252ull, h = 0;
  for (int s = 1; s <= steps; ++s) {
    for (long i = 0; i < work; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      size_t k = x % words;
      m[k] = m[k] * 6364136223846793005ull + x;
      h += m[k];
    }
    printf("step %d of %d hash %016llx\n", s, steps, (unsigned long long)h);
    fflush(stdout);
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < words; ++i) sum = sum * 31 + m[i];
  printf("checksum %016llx\n", (unsigned long long)sum);
  free(m);
  return 0;
}
