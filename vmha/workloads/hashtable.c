/* hashtable: random updates to an open-addressing hash table (the access
   pattern of a key-value cache: scattered writes over many pages). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

int main(int argc, char **argv) {
  size_t slots = argc > 1 ? strtoul(argv[1], NULL, 10) : (1u << 21);
  long ops = argc > 2 ? atol(argv[2]) : 4000000;
  uint64_t *keys = calloc(slots, sizeof *keys), *vals = calloc(slots, sizeof *vals);
  if (!keys || !vals) {
    fprintf(stderr, "hashtable: out of memory\n");
    return 1;
  }
  uint64_t seed = 88172645463325252ull, used = 0, hits = 0;
  for (long i = 0; i < ops; ++i) {
    uint64_t k = next(&seed) % (slots * 3 / 4) + 1;
    size_t h = (k * 0x9e3779b97f4a7c15ull) % slots;
    while (keys[h] && keys[h] != k) h = (h + 1) % slots;
    if (keys[h] == k) {
      ++hits;
      vals[h] += i;
    } else if (used < slots * 7 / 8) {
      keys[h] = k;
      vals[h] = i;
      ++used;
    }
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < slots; ++i) sum = sum * 31 + vals[i] + keys[i];
  printf("hashtable slots=%zu ops=%ld used=%llu hits=%llu checksum=%llx\n", slots, ops, (unsigned long long)used,
         (unsigned long long)hits, (unsigned long long)sum);
  return 0;
}
