/* stream: STREAM-like memory bandwidth (copy, scale, add, triad) over arrays
   larger than the caches. Prints a checksum, not the bandwidth, so native
   and vmha output can be compared; the bench times the whole run. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  if (!a || !b || !c) {
    fprintf(stderr, "stream: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < n; ++i) {
    a[i] = 1.0 + i % 7;
    b[i] = 2.0;
    c[i] = 0.0;
  }
  for (int r = 0; r < reps; ++r) {
    for (size_t i = 0; i < n; ++i) c[i] = a[i];
    for (size_t i = 0; i < n; ++i) b[i] = 3.0 * c[i];
    for (size_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5 * c[i];
    for (size_t i = 0; i < n; ++i) a[i] *= 0.25;
  }
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += a[i] + b[i] + c[i];
  printf("stream n=%zu reps=%d checksum=%.6e\n", n, reps, sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
