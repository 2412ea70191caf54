/* bfs: breadth-first search over a random sparse graph in CSR form
   (pointer-chasing reads, frontier writes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*s >> 33);
}

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 300000;
  uint32_t deg = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 8;
  uint64_t m = (uint64_t)n * deg, seed = 42;
  uint32_t *start = calloc(n + 1, 4), *edges = malloc(m * 4), *src = malloc(m * 4), *dst = malloc(m * 4);
  int32_t *dist = malloc(n * 4);
  uint32_t *queue = malloc(n * 4);
  if (!start || !edges || !src || !dst || !dist || !queue) {
    fprintf(stderr, "bfs: out of memory\n");
    return 1;
  }
  for (uint64_t e = 0; e < m; ++e) {
    src[e] = rnd(&seed) % n;
    dst[e] = rnd(&seed) % n;
    start[src[e] + 1]++;
  }
  for (uint32_t v = 0; v < n; ++v) start[v + 1] += start[v];
  uint32_t *fill = calloc(n, 4);
  for (uint64_t e = 0; e < m; ++e) edges[start[src[e]] + fill[src[e]]++] = dst[e];
  for (uint32_t v = 0; v < n; ++v) dist[v] = -1;
  uint32_t head = 0, tail = 0, reached = 0;
  uint64_t total = 0;
  int32_t maxd = 0;
  dist[0] = 0;
  queue[tail++] = 0;
  while (head < tail) {
    uint32_t v = queue[head++];
    ++reached;
    total += dist[v];
    if (dist[v] > maxd) maxd = dist[v];
    for (uint32_t i = start[v]; i < start[v + 1]; ++i)
      if (dist[edges[i]] < 0) {
        dist[edges[i]] = dist[v] + 1;
        queue[tail++] = edges[i];
      }
  }
  printf("bfs n=%u edges=%llu reached=%u depth=%d distance_sum=%llu\n", n, (unsigned long long)m, reached, maxd,
         (unsigned long long)total);
  return 0;
}
