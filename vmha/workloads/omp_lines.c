// omp_lines LINES WORK THREADS: an OpenMP program (dynamically linked:
// libgomp's thread pool lives for the whole run, its threads waiting in
// futexes between parallel regions). For each of LINES numbered lines a
// parallel loop over WORK elements updates a shared array and reduces a
// sum; the line shows a running checksum, flushed; then the thread count and
// the checksum. Integer arithmetic: the same bytes for any thread count.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s LINES WORK THREADS\n", argv[0]);
    return 2;
  }
  long lines = atol(argv[1]), work = atol(argv[2]);
  int threads = atoi(argv[3]);
  if (lines < 1 || work < 1 || threads < 1) return 2;
  uint32_t* a = calloc((size_t)work, sizeof *a);
  if (!a) return 1;
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  uint64_t check = 0;
  for (long i = 1; i <= lines; ++i) {
    uint64_t sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
    for (long j = 0; j < work; ++j) {
      uint32_t x = a[j] * 2654435761u + (uint32_t)(i * 40503 + j);
      for (int r = 0; r < 16; ++r) x ^= (x << 13), x ^= (x >> 17), x ^= (x << 5);
      a[j] = x;
      sum += x;
    }
    check = check * 1000003 + sum;
    printf("step %ld %llu\n", i, (unsigned long long)check);
    fflush(stdout);
  }
  int used = 1;
#ifdef _OPENMP
#pragma omp parallel
  {
#pragma omp single
    used = omp_get_num_threads();
  }
#endif
  printf("threads=%d checksum %llu\n", used, (unsigned long long)check);
  free(a);
  return 0;
}
