/* dyn_probe: a dynamically linked program (libc and libm through ld.so)
   that prints what its start-up got from the loader: the auxiliary vector
   as the kernel gives it, TLS set up by ld.so, a library call resolved
   through the PLT, a library opened with dlopen. Every line is the same
   natively and under vmha run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

extern char _start[];
static __thread int tls_counter = 41;

static int first_phdr(struct dl_phdr_info *info, size_t size, void *out) {
  (void)size;
  *(const ElfW(Phdr) **)out = info->dlpi_phdr;
  return 1; /* the main program comes first */
}

static int cmp(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  (void)argc;
  const ElfW(Phdr) *phdr = NULL;
  dl_iterate_phdr(first_phdr, &phdr);
  const char *execfn = (const char *)getauxval(AT_EXECFN);
  const char *platform = (const char *)getauxval(AT_PLATFORM);
  printf("AT_PHDR is the program's headers: %s\n", getauxval(AT_PHDR) == (unsigned long)phdr ? "yes" : "no");
  printf("AT_PHENT %lu, AT_PAGESZ %lu\n", getauxval(AT_PHENT), getauxval(AT_PAGESZ));
  printf("AT_ENTRY is _start: %s\n", getauxval(AT_ENTRY) == (unsigned long)_start ? "yes" : "no");
  printf("AT_BASE set: %s\n", getauxval(AT_BASE) != 0 ? "yes" : "no");
  printf("AT_RANDOM set: %s\n", getauxval(AT_RANDOM) != 0 ? "yes" : "no");
  printf("AT_SECURE %lu, AT_PLATFORM %s\n", getauxval(AT_SECURE), platform ? platform : "(none)");
  printf("AT_EXECFN is argv[0]: %s\n", execfn && !strcmp(execfn, argv[0]) ? "yes" : "no");
  printf("AT_CLKTCK %lu\n", getauxval(AT_CLKTCK));
  ++tls_counter;
  printf("TLS %d\n", tls_counter);
  volatile double x = 1.0;
  printf("cos(1) %.9f, sqrt(2) %.9f\n", cos(x), sqrt(x + 1));
  unsigned v[1000], s = 12345, sum = 0;
  for (int i = 0; i < 1000; ++i) v[i] = s = s * 1103515245u + 12345u;
  qsort(v, 1000, sizeof v[0], cmp);
  for (int i = 0; i < 1000; ++i) sum = sum * 31 + v[i];
  printf("qsort sum %08x\n", sum);
  void *h = dlopen("libutil.so.1", RTLD_NOW);
  printf("dlopen libutil.so.1: %s\n", h ? "ok" : dlerror());
  if (h) dlclose(h);
  return 0;
}
