/* matmul: dense double-precision matrix multiply (blocked i-k-j loops). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 320;
  double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
         *c = calloc((size_t)n * n, sizeof(double));
  if (!a || !b || !c) {
    fprintf(stderr, "matmul: out of memory\n");
    return 1;
  }
  for (int i = 0; i < n * n; ++i) {
    a[i] = (i % 13) * 0.5;
    b[i] = (i % 17) * 0.25 - 1.0;
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      double aik = a[i * n + k];
      for (int j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];
    }
  double trace = 0, sum = 0;
  for (int i = 0; i < n; ++i) trace += c[i * n + i];
  for (int i = 0; i < n * n; ++i) sum += c[i];
  printf("matmul n=%d trace=%.6f sum=%.6f\n", n, trace, sum);
  return 0;
}
