/* gendata: deterministic text input for the busybox workloads — log-like
   lines with words, numbers and fields (compressible but not trivial). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *words[] = {"alpha", "bravo",  "charlie", "delta", "echo",  "foxtrot",  "golf",   "hotel",
                              "india", "juliet", "kilo",    "lima",  "mike",  "november", "oscar",  "papa",
                              "gpu",   "node",   "job",     "queue", "epoch", "replica",  "backup", "commit"};

int main(int argc, char **argv) {
  long lines = argc > 1 ? atol(argv[1]) : 20000;
  uint64_t s = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  for (long i = 0; i < lines; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    unsigned a = (unsigned)(s >> 33);
    printf("%ld,%s,%s,%u,%u.%02u,%s\n", 100000 + (long)(a % 90000), words[a % 24], words[(a >> 5) % 24],
           (a >> 10) % 512, (a >> 3) % 1000, a % 100, words[(a >> 15) % 24]);
  }
  return 0;
}
