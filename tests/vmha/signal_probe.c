/* signal_probe MODE: signal behaviour checks run inside vmha (and natively);
   each mode prints one line of key=value results for check_vmha_signals.
     self       a SIGUSR1 handler (SA_SIGINFO) runs before kill() to itself
                returns, with si_code SI_USER and its pid; raise() too; the
                handler starts with a clean FPU and the caller's rounding
                mode is back after it; SA_ONSTACK runs on the sigaltstack;
                SA_RESETHAND resets; SA_NODEFER lets it nest; kill() of
                other processes fails
     mask       a blocked SIGUSR1 stays pending (sigpending) and runs on
                unblocking; sigsuspend and sigtimedwait take blocked ones
     wait SIG   prints "ready", then waits in sigsuspend until SIG (from outside) runs
                its handler
     term MODE  a SIGTERM handler writes "final line" and exits 0; prints
                "ready" and then spins (MODE spin) or sleeps (MODE sleep)
     idle       prints "ready" and sleeps for ever (default actions)
     alarm R    setitimer(ITIMER_REAL) cuts a pipe read: R=restart (SA_RESTART:
                the read goes on and gets the byte the handler wrote) or
                R=eintr (EINTR); then alarm(1) + sigsuspend and a nanosleep cut by
                a timer (EINTR, with the time left)
     timer      timer_create (SIGEV_SIGNAL, CLOCK_MONOTONIC) every 50 ms:
                three expiries with si_code SI_TIMER and its sigev_value
     ticks N MS a SIGTERM handler writes "final line" and exits 0, a SIGUSR1
                handler writes "usr1" and goes on; prints "tick I" every MS
                milliseconds up to N, then "done" (the replication tests
                kill and signal it on the way)
     armed      a SIGUSR2 handler and a 300 ms timer_create timer; prints
                "armed" and waits in sigsuspend until the handler ran (save/restore) */
#define _GNU_SOURCE
#include <errno.h>
#include <fenv.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, depth, max_depth, code_seen, pid_ok, round_ok, on_alt, value_seen;
static char alt_stack[65536];
static int pipe_fds[2];

static long ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static void on(int sig, void (*fn)(int, siginfo_t *, void *), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | flags;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

static void counting(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)uc;
  ++hits;
  code_seen = si->si_code;
  pid_ok = si->si_pid == getpid();
  round_ok = fegetround() == FE_TONEAREST;
  value_seen = si->si_value.sival_int;
  char here;
  on_alt = &here >= alt_stack && &here < alt_stack + sizeof alt_stack;
}

static void nesting(int sig, siginfo_t *si, void *uc) {
  ++hits;
  if (++depth > max_depth) max_depth = depth;
  if (hits == 1) raise(sig); /* nested only with SA_NODEFER, else right after */
  --depth;
  (void)si;
  (void)uc;
}

static void final_line(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  static const char line[] = "final line\n";
  write(1, line, sizeof line - 1);
  _exit(0);
}

static void usr1_line(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  static const char line[] = "usr1\n";
  write(1, line, sizeof line - 1);
}

static int self(void) {
  on(SIGUSR1, counting, 0);
  fesetround(FE_UPWARD);
  kill(getpid(), SIGUSR1);
  int after_kill = hits, code_kill = code_seen, pid_kill = pid_ok, clean = round_ok;
  int round_back = fegetround() == FE_UPWARD;
  fesetround(FE_TONEAREST);
  raise(SIGUSR1);
  int after_raise = hits, code_raise = code_seen;
  stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  on(SIGUSR1, counting, SA_ONSTACK);
  raise(SIGUSR1);
  int alt = on_alt;
  on(SIGUSR1, counting, SA_RESETHAND);
  raise(SIGUSR1);
  struct sigaction now;
  sigaction(SIGUSR1, NULL, &now);
  int reset = now.sa_handler == SIG_DFL;
  hits = 0;
  on(SIGUSR2, nesting, 0);
  raise(SIGUSR2);
  int deferred = max_depth, deferred_hits = hits;
  hits = max_depth = 0;
  on(SIGUSR2, nesting, SA_NODEFER);
  raise(SIGUSR2);
  /* Other processes are out of reach (under vmha: EPERM for one that exists). */
  int other = kill(1, 0) < 0 ? errno : 0, none = kill(0x3ffffff0, 0) < 0 ? errno : 0;
  printf("kill=%d code=%d pid_ok=%d clean_fpu=%d round_back=%d raise=%d raise_code=%d onstack=%d reset=%d "
         "defer=%d/%d nodefer=%d/%d other=%d none=%d\n",
         after_kill, code_kill, pid_kill, clean, round_back, after_raise, code_raise, alt, reset, deferred,
         deferred_hits, (int)max_depth, (int)hits, other, none);
  return 0;
}

static int mask(void) {
  on(SIGUSR1, counting, 0);
  sigset_t usr1, old, pend;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &old);
  kill(getpid(), SIGUSR1);
  int while_blocked = hits;
  sigpending(&pend);
  int pending = sigismember(&pend, SIGUSR1);
  sigprocmask(SIG_SETMASK, &old, NULL);
  int after_unblock = hits;
  /* sigsuspend: blocked, raised, then taken by the suspend mask. */
  sigprocmask(SIG_BLOCK, &usr1, NULL);
  raise(SIGUSR1);
  sigset_t none;
  sigemptyset(&none);
  int r = sigsuspend(&none);
  int suspend_eintr = r == -1 && errno == EINTR, after_suspend = hits;
  sigset_t cur;
  sigprocmask(SIG_SETMASK, NULL, &cur);
  int mask_back = sigismember(&cur, SIGUSR1);
  /* sigtimedwait takes it without the handler. */
  raise(SIGUSR1);
  siginfo_t si;
  struct timespec zero = {0, 0};
  int got = sigtimedwait(&usr1, &si, &zero);
  int empty = sigtimedwait(&usr1, &si, &zero);
  int again = empty < 0 && errno == EAGAIN;
  printf("blocked=%d pending=%d unblocked=%d suspend_eintr=%d suspended=%d mask_back=%d timedwait=%d again=%d\n",
         while_blocked, pending, after_unblock, suspend_eintr, after_suspend, mask_back, got, again);
  return 0;
}

/* Blocks `sig`; *waiting is the mask to wait with. A check of `hits` and
   then pause() is the lost-wakeup race: a signal handled between the two
   leaves pause() waiting for ever (the host SIGUSR1 test hung under load).
   Blocked but inside sigsuspend, the signal waits for the wait. */
static void hold(int sig, sigset_t *waiting) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_BLOCK, &set, waiting);
  sigdelset(waiting, sig);
}

static int wait_for(int sig) {
  on(sig, counting, 0);
  sigset_t waiting;
  hold(sig, &waiting);
  printf("ready\n");
  fflush(stdout);
  int eintr = 0;
  while (!hits)
    if (sigsuspend(&waiting) < 0 && errno == EINTR) ++eintr;
  printf("got signal %d eintr=%d code=%d\n", sig, eintr, (int)code_seen);
  return 0;
}

static int term(const char *how) {
  on(SIGTERM, final_line, 0);
  printf("ready\n");
  fflush(stdout);
  if (strcmp(how, "sleep") == 0)
    for (;;) sleep(100);
  volatile uint64_t x = 0;
  for (;;) x = x * 6364136223846793005ull + 1;
  return 0;
}

static int idle(void) {
  printf("ready\n");
  fflush(stdout);
  for (;;) sleep(100);
  return 0;
}

/* Each timer below must fire while the call it cuts waits. A guest slowed
   past the timer between arming it and the call (a loaded host, an epoch
   pause every 2 ms) got the signal before the call: the read then found the
   handler's byte (read=1 where EINTR was due) or pause() waited for ever.
   `waiting` is set just before each call; a handler that finds it clear came
   early, and that try is made again (`early` of them, not counted as hits). */
static volatile sig_atomic_t waiting_now, came_early;

static void alarm_writes(int sig, siginfo_t *si, void *uc) {
  (void)sig;
  (void)si;
  (void)uc;
  ++hits;
  if (!waiting_now) came_early = 1;
  write(pipe_fds[1], "x", 1);
}

static void alarm_counts(int sig, siginfo_t *si, void *uc) {
  if (!waiting_now) came_early = 1;
  counting(sig, si, uc);
}

static int alarms(const char *how) {
  int restart = strcmp(how, "restart") == 0;
  if (pipe(pipe_fds) != 0) return 2;
  on(SIGALRM, alarm_writes, restart ? SA_RESTART : 0);
  struct itimerval it = {{0, 0}, {0, 200000}};
  struct timespec t0;
  long r, read_ms;
  int err, early = 0;
  do { /* an early alarm's byte is what the read got: nothing left over */
    came_early = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    setitimer(ITIMER_REAL, &it, NULL);
    char c;
    waiting_now = 1;
    r = read(pipe_fds[0], &c, 1);
    err = r < 0 ? errno : 0;
    waiting_now = 0;
    read_ms = ms_since(&t0);
  } while (came_early && ++early);
  /* alarm(1) and a wait: EINTR after a second. SIGALRM is blocked but in
     sigsuspend, so it cannot come before the wait. */
  on(SIGALRM, alarm_counts, restart ? SA_RESTART : 0);
  hits = 0;
  sigset_t during;
  hold(SIGALRM, &during);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  alarm(1);
  int p = sigsuspend(&during);
  int pause_eintr = p < 0 && errno == EINTR;
  long pause_ms = ms_since(&t0);
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  sigprocmask(SIG_UNBLOCK, &alrm, NULL);
  /* A sleep is never restarted: EINTR with the time left. sleep_ms counts
     from before the timer is armed (it cannot fire sooner than 100 ms after
     that), slept_ms from the call: the time left is at least 5 s less that. */
  struct itimerval short_one = {{0, 0}, {0, 100000}};
  struct timespec req = {5, 0}, rem = {0, 0}, t1;
  int s, late_hits = 0;
  long sleep_ms, slept_ms;
  do {
    came_early = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    setitimer(ITIMER_REAL, &short_one, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    waiting_now = 1;
    s = nanosleep(&req, &rem);
    waiting_now = 0;
    sleep_ms = ms_since(&t0);
    slept_ms = ms_since(&t1);
  } while (came_early && ++late_hits);
  int sleep_eintr = s < 0 && errno == EINTR;
  long rem_ms = rem.tv_sec * 1000 + rem.tv_nsec / 1000000;
  printf("read=%ld errno=%d read_ms=%ld pause_eintr=%d pause_ms=%ld alarm_hits=%d sleep_eintr=%d sleep_ms=%ld "
         "slept_ms=%ld rem_ms=%ld early=%d\n",
         r, err, read_ms, pause_eintr, pause_ms, (int)hits - late_hits, sleep_eintr, sleep_ms, slept_ms, rem_ms,
         early + late_hits);
  return 0;
}

/* A CLOCK_MONOTONIC timer that sends SIGUSR2 with `value`, counted by `counting`. */
static int usr2_timer(int value, timer_t* t) {
  on(SIGUSR2, counting, 0);
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGUSR2;
  ev.sigev_value.sival_int = value;
  return timer_create(CLOCK_MONOTONIC, &ev, t);
}

static int timer(void) {
  timer_t t;
  if (usr2_timer(42, &t) != 0) return 2;
  struct itimerspec its = {{0, 50000000}, {0, 50000000}};
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* SIGUSR2 blocked but while waiting: the count is read with no fourth
     expiry landing after the third, however late the process runs. */
  sigset_t waiting;
  hold(SIGUSR2, &waiting);
  timer_settime(t, 0, &its, NULL);
  while (hits < 3) sigsuspend(&waiting);
  long ms = ms_since(&t0);
  struct itimerspec left;
  timer_gettime(t, &left);
  timer_delete(t);
  printf("hits=%d code=%d value=%d ms=%ld interval_ns=%ld\n", (int)hits, (int)code_seen, (int)value_seen, ms,
         left.it_interval.tv_nsec);
  return 0;
}

static int armed(void) {
  timer_t t;
  if (usr2_timer(7, &t) != 0) return 2;
  struct itimerspec its = {{0, 0}, {0, 300000000}};
  sigset_t waiting;
  hold(SIGUSR2, &waiting);
  timer_settime(t, 0, &its, NULL);
  printf("armed\n");
  fflush(stdout);
  while (!hits) sigsuspend(&waiting);
  printf("fired value=%d code=%d\n", (int)value_seen, (int)code_seen);
  return 0;
}

static int ticks(int n, long ms) {
  on(SIGTERM, final_line, 0);
  on(SIGUSR1, usr1_line, SA_RESTART);
  struct timespec step = {ms / 1000, (ms % 1000) * 1000000};
  for (int i = 1; i <= n; ++i) {
    printf("tick %d\n", i);
    fflush(stdout);
    nanosleep(&step, NULL);
  }
  printf("done\n");
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  const char *arg = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "self") == 0) return self();
  if (strcmp(mode, "mask") == 0) return mask();
  if (strcmp(mode, "wait") == 0) return wait_for(atoi(arg));
  if (strcmp(mode, "term") == 0) return term(arg);
  if (strcmp(mode, "idle") == 0) return idle();
  if (strcmp(mode, "alarm") == 0) return alarms(arg);
  if (strcmp(mode, "timer") == 0) return timer();
  if (strcmp(mode, "armed") == 0) return armed();
  if (strcmp(mode, "ticks") == 0) return ticks(atoi(arg), argc > 3 ? atol(argv[3]) : 20);
  fprintf(stderr, "usage: signal_probe self|mask|wait SIG|term spin|sleep|idle|alarm restart|eintr|timer|armed|ticks N MS\n");
  return 2;
}
