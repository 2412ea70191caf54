/* Guest threads under vmha: prints what the program saw, the same natively.
 *
 *   thread_probe rounds R N ITERS   R rounds; each starts N threads that take
 *                                   ITERS turns each in strict order (mutex +
 *                                   condvar), add to an atomic counter and to
 *                                   a thread-local one (TLS), and are joined;
 *                                   one line per round
 *   thread_probe block              two threads wait on a condvar (one with a
 *                                   timeout an hour away), one sleeps in
 *                                   nanosleep, one computes until the file
 *                                   ./release exists; "ready" once all are
 *                                   there, then what each saw after the release
 *   thread_probe misc               gettid, tgkill to another thread, a
 *                                   timed wait that times out, sched_yield,
 *                                   sched_getaffinity, exit of one thread
 *   thread_probe futex              the futex operations glibc's pthreads do
 *                                   not all use: CMP_REQUEUE, REQUEUE,
 *                                   WAKE_OP, WAIT_BITSET/WAKE_BITSET, timeouts
 *   thread_probe sigwait            one thread in sigtimedwait (times out)
 *                                   and sigwait while the other computes and
 *                                   then sends the signal
 *   thread_probe pipe               one thread blocks reading standard input
 *                                   while the other computes and prints
 *                                   "computed"; the byte comes after that
 *   thread_probe overlap W          one thread counts while main, making no
 *                                   system call, reads the count in up to W
 *                                   short windows: "overlap=1" once a window
 *                                   saw it change 3 times (both threads ran
 *                                   at once), else "overlap=0" (on one CPU a
 *                                   window can see at most one change: the
 *                                   counter runs only when main is off)
 *   thread_probe segv               a thread writes to address 16 while main
 *                                   spins: the process dies by SIGSEGV
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_long total;
static __thread long mine; /* TLS: each thread's own, through its FS base */
static int turn, nthreads, iters;

static void *taker(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < iters; ++i) {
    pthread_mutex_lock(&mu);
    while (turn % nthreads != id) pthread_cond_wait(&cv, &mu);
    ++turn;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    atomic_fetch_add(&total, id + 1);
    mine += id * 1000 + i;
  }
  return (void *)mine;
}

static int rounds(int r, int n, int it) {
  nthreads = n;
  iters = it;
  for (int k = 0; k < r; ++k) {
    pthread_t t[64];
    turn = 0;
    atomic_store(&total, 0);
    mine = -1; /* the main thread's copy stays its own */
    for (long i = 0; i < n; ++i)
      if (pthread_create(&t[i], NULL, taker, (void *)i) != 0) return 1;
    long sum = 0;
    for (int i = 0; i < n; ++i) {
      void *v;
      pthread_join(t[i], &v);
      sum += (long)v;
    }
    printf("round %d: turns=%d total=%ld tls_sum=%ld main_tls=%ld\n", k, turn, atomic_load(&total), sum, mine);
    fflush(stdout);
  }
  return 0;
}

/* block */
static int go, waiting, computing;
static long computed;

static void *waiter(void *arg) {
  long timed = (long)arg;
  pthread_mutex_lock(&mu);
  ++waiting;
  pthread_cond_broadcast(&cv);
  int r = 0;
  while (!go && r == 0) {
    if (timed) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_sec += 3600;
      r = pthread_cond_timedwait(&cv, &mu, &ts);
    } else {
      r = pthread_cond_wait(&cv, &mu);
    }
  }
  pthread_mutex_unlock(&mu);
  return (void *)(long)r;
}

static void *sleeper(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  ++waiting;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  long naps = 0;
  for (;;) {
    struct timespec d = {0, 2000000};
    if (nanosleep(&d, NULL) != 0) return (void *)-1L; /* never EINTR here */
    ++naps;
    pthread_mutex_lock(&mu);
    int done = go;
    pthread_mutex_unlock(&mu);
    if (done) break;
  }
  return (void *)(long)(naps > 0);
}

static void *computer(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  computing = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  unsigned long x = 1;
  for (;;) {
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (access("release", F_OK) == 0) break;
  }
  /* A result that does not depend on how long it ran. */
  unsigned long y = 7;
  for (int i = 0; i < 1000; ++i) y = y * 6364136223846793005ul + 1442695040888963407ul;
  computed = (long)(y % 1000003);
  pthread_mutex_lock(&mu);
  go = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  return NULL;
}

static int block(void) {
  pthread_t w0, w1, s, c;
  pthread_create(&w0, NULL, waiter, (void *)0L);
  pthread_create(&w1, NULL, waiter, (void *)1L);
  pthread_create(&s, NULL, sleeper, NULL);
  pthread_mutex_lock(&mu);
  while (waiting < 3) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  pthread_create(&c, NULL, computer, NULL);
  pthread_mutex_lock(&mu);
  while (!computing) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  printf("ready\n");
  fflush(stdout);
  void *r0, *r1, *rs;
  pthread_join(w0, &r0);
  pthread_join(w1, &r1);
  pthread_join(s, &rs);
  pthread_join(c, NULL);
  printf("waiter=%ld timed_waiter=%ld sleeper=%ld computed=%ld\n", (long)r0, (long)r1, (long)rs, computed);
  return 0;
}

/* misc */
static volatile sig_atomic_t got_usr1;
static pid_t other_tid;
static void on_usr1(int sig) { got_usr1 = sig; }

static void *misc_thread(void *arg) {
  (void)arg;
  pthread_mutex_lock(&mu);
  other_tid = (pid_t)syscall(SYS_gettid);
  pthread_cond_broadcast(&cv);
  while (!go) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  pthread_exit((void *)42L);
}

/* A process-wide signal while the running thread blocks it reaches the
   thread waiting in pthread_join. */
static volatile sig_atomic_t got_usr2;
static void on_usr2(int sig) { got_usr2 = sig; }

static void *masking_thread(void *arg) {
  (void)arg;
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  kill(getpid(), SIGUSR2);
  while (!got_usr2) {
  }
  return NULL;
}

static int misc(void) {
  signal(SIGUSR1, on_usr1);
  pid_t me = (pid_t)syscall(SYS_gettid);
  pthread_t t;
  pthread_create(&t, NULL, misc_thread, NULL);
  pthread_mutex_lock(&mu);
  while (!other_tid) pthread_cond_wait(&cv, &mu);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_nsec += 20000000;
  if (ts.tv_nsec >= 1000000000) ts.tv_sec += 1, ts.tv_nsec -= 1000000000;
  int timed = pthread_cond_timedwait(&cv, &mu, &ts); /* nobody signals: times out */
  int kill_other = syscall(SYS_tgkill, getpid(), other_tid, 0); /* it waits for go */
  go = 1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  int kill_none = syscall(SYS_tgkill, getpid(), 0x7ffffff0, 0) < 0 ? errno : 0;
  int yield = sched_yield();
  void *v;
  pthread_join(t, &v);
  /* pthread_join returns once the kernel cleared the thread's tid, which is
     before Linux has released the thread: a tgkill then may still find it
     (natively, on a loaded host). Ask until it is gone, a bounded number of times. */
  int gone = 0;
  for (long i = 0; i < 10000000 && gone == 0; ++i) {
    gone = syscall(SYS_tgkill, getpid(), other_tid, 0) < 0 ? errno : 0;
    if (gone == 0) sched_yield();
  }
  raise(SIGUSR1);
  signal(SIGUSR2, on_usr2);
  pthread_t m;
  pthread_create(&m, NULL, masking_thread, NULL);
  pthread_join(m, NULL);
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  printf("main_is_pid=%d other_differs=%d timedout=%d kill_other=%d kill_none=%d yield=%d joined=%ld gone=%d "
         "usr1=%d cpus_ok=%d routed=%d\n",
         me == getpid(), other_tid != me, timed == ETIMEDOUT, kill_other, kill_none, yield, (long)v, gone,
         got_usr1 == SIGUSR1, CPU_COUNT(&set) >= 1, got_usr2 == SIGUSR2);
  return 0;
}

/* sigwait: one thread waits for a signal while another computes. */
static int timed_out;

static void *sigwaiter(void *arg) {
  (void)arg;
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  struct timespec t = {0, 10000000};
  int r = sigtimedwait(&s, NULL, &t); /* nothing sent yet: EAGAIN after 10 ms */
  pthread_mutex_lock(&mu);
  timed_out = r < 0 && errno == EAGAIN ? 1 : -1;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  int sig = 0;
  sigwait(&s, &sig);
  return (void *)(long)sig;
}

static int sigwait_mode(void) {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  pthread_t w;
  pthread_create(&w, NULL, sigwaiter, NULL);
  unsigned long x = 1; /* runs while the other thread waits */
  for (int i = 0; i < 3000000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  pthread_mutex_lock(&mu);
  while (!timed_out) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  kill(getpid(), SIGUSR1);
  void *v;
  pthread_join(w, &v);
  printf("timedwait=%d sigwait=%ld x=%lu\n", timed_out, (long)v, x % 1000);
  return 0;
}

/* pipe: one thread blocks reading standard input while another computes. */
static void *reader(void *arg) {
  (void)arg;
  char c = 0;
  long n = read(0, &c, 1);
  return (void *)(n == 1 ? (long)c : -1L);
}

static int pipe_mode(void) {
  pthread_t r;
  pthread_create(&r, NULL, reader, NULL);
  unsigned long x = 1;
  for (int i = 0; i < 3000000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  printf("computed x=%lu\n", x % 1000); /* the byte comes once this is out */
  fflush(stdout);
  void *v;
  pthread_join(r, &v);
  printf("read=%c\n", (char)(long)v);
  return 0;
}

/* futex */
static uint32_t fa, fb, fc;

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *t, uint32_t *w2, uint32_t val3) {
  return syscall(SYS_futex, w, op, val, t, w2, val3);
}

static void *bits_waiter(void *arg) {
  /* Waits on fa with its own bitset; may be requeued elsewhere meanwhile. */
  long r = futex(&fa, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, (uint32_t)(long)arg);
  return (void *)(r == 0 ? 0L : (long)errno);
}

static int futex_ops(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, bits_waiter, (void *)(1L << i));
  /* All three wait once all three are requeued from fa to fb (none woken). */
  long moved = 0;
  while (moved < 3) {
    long n = futex(&fa, FUTEX_CMP_REQUEUE_PRIVATE, 0, (const struct timespec *)(long)INT_MAX, &fb, 0);
    if (n < 0) return 1;
    moved += n;
    if (moved < 3) sched_yield();
  }
  long bit2 = futex(&fb, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 2); /* the second waiter */
  long none = futex(&fb, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 8); /* nobody has bit 3 */
  long req = futex(&fb, FUTEX_REQUEUE_PRIVATE, 0, (const struct timespec *)1L, &fc, 0); /* one to fc */
  /* fc = 1 (old 0); wake one on fb; old == 0, so one on fc too. */
  long op = futex(&fb, FUTEX_WAKE_OP_PRIVATE, 1, (const struct timespec *)1L, &fc,
                  FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
  long rest = 0;
  for (int i = 0; i < 3; ++i) {
    void *v;
    pthread_join(t[i], &v);
    rest += (long)v;
  }
  long again = futex(&fa, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0) < 0 ? errno : 0; /* fa is 0, not 1 */
  struct timespec ten_ms = {0, 10000000};
  long rel = futex(&fa, FUTEX_WAIT_PRIVATE, 0, &ten_ms, NULL, 0) < 0 ? errno : 0;
  struct timespec past;
  clock_gettime(CLOCK_MONOTONIC, &past);
  past.tv_sec -= 1;
  long abs_past = futex(&fa, FUTEX_WAIT_BITSET_PRIVATE, 0, &past, NULL, FUTEX_BITSET_MATCH_ANY) < 0 ? errno : 0;
  long zero_bits = futex(&fa, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, 0) < 0 ? errno : 0;
  printf("moved=%ld bit2=%ld none=%ld requeue=%ld wake_op=%ld fc=%u waiters=%ld eagain=%d etimedout=%d/%d einval=%d\n",
         moved, bit2, none, req, op, fc, rest, again == EAGAIN, rel == ETIMEDOUT, abs_past == ETIMEDOUT,
         zero_bits == EINVAL);
  return 0;
}

/* overlap */
static atomic_ulong ticks;
static atomic_int stop_counting;

static void *counter(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&stop_counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
  return NULL;
}

static int overlap(long windows) {
  pthread_t t;
  pthread_create(&t, NULL, counter, NULL);
  while (!atomic_load_explicit(&ticks, memory_order_relaxed)) {}
  int seen = 0;
  for (long w = 0; w < windows && !seen; ++w) {
    unsigned long last = atomic_load_explicit(&ticks, memory_order_relaxed);
    int changes = 0;
    for (int i = 0; i < 20000; ++i) {
      unsigned long now = atomic_load_explicit(&ticks, memory_order_relaxed);
      if (now != last) ++changes;
      last = now;
    }
    seen = changes >= 3;
  }
  atomic_store(&stop_counting, 1);
  pthread_join(t, NULL);
  printf("overlap=%d\n", seen);
  return 0;
}

/* segv */
static volatile int never;
static volatile uintptr_t unmapped = 16;

static void *faulter(void *arg) {
  (void)arg;
  unsigned long x = 1;
  for (int i = 0; i < 1000000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  *(volatile unsigned long *)unmapped = x;
  return NULL;
}

static int segv(void) {
  pthread_t t;
  pthread_create(&t, NULL, faulter, NULL);
  while (!never) {}
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 5 && !strcmp(argv[1], "rounds")) return rounds(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
  if (argc >= 2 && !strcmp(argv[1], "block")) return block();
  if (argc >= 2 && !strcmp(argv[1], "misc")) return misc();
  if (argc >= 2 && !strcmp(argv[1], "futex")) return futex_ops();
  if (argc >= 2 && !strcmp(argv[1], "sigwait")) return sigwait_mode();
  if (argc >= 2 && !strcmp(argv[1], "pipe")) return pipe_mode();
  if (argc >= 3 && !strcmp(argv[1], "overlap")) return overlap(atol(argv[2]));
  if (argc >= 2 && !strcmp(argv[1], "segv")) return segv();
  fprintf(stderr, "usage: thread_probe rounds R N ITERS | block | misc | futex | sigwait | pipe | overlap W | segv\n");
  return 2;
}
