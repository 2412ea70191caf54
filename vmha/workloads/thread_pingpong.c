/* thread_pingpong N: two threads hand a token back and forth N times
   through a mutex and condition variables (each hand-over wakes the other
   thread, which must run next); prints the time per hand-over. vmha bench's
   thread-switch row. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long turn = 0, rounds;

static void *player(void *arg) {
  long me = (long)arg;
  pthread_mutex_lock(&mu);
  while (turn < rounds) {
    while (turn < rounds && turn % 2 != me) pthread_cond_wait(&cv, &mu);
    if (turn < rounds) turn++;
    pthread_cond_broadcast(&cv);
  }
  pthread_mutex_unlock(&mu);
  return NULL;
}

int main(int argc, char **argv) {
  rounds = argc > 1 ? atol(argv[1]) : 1000;
  struct timespec a, b;
  pthread_t t;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_create(&t, NULL, player, (void *)1);
  player((void *)0);
  pthread_join(t, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.1f us per hand-over\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / rounds / 1e3);
  return 0;
}
