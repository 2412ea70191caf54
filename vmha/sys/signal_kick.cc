#include "vmha/sys/signal_kick.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace vmha {

namespace {

constexpr int kRelayed[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2};
constexpr long kRekickNs = 2000000;

int kick_signal() { return SIGRTMIN + 6; }
int pause_signal() { return SIGRTMIN + 5; }  // Vm::request_pause's

std::atomic<uint64_t> g_host_pending{0};
std::atomic<int32_t> g_host_code[kMaxSignal + 1], g_host_pid[kMaxSignal + 1];
std::atomic<uint32_t> g_host_uid[kMaxSignal + 1];
std::atomic<bool> g_rekick{false};
// The running vCPU's kick timer, for the relay; kNoTimer when none. Not a
// null pointer: the kernel numbers a process's timers from 0, so vmha's first
// timer_t is a null pointer.
constexpr intptr_t kNoTimer = -1;
std::atomic<intptr_t> g_kick_timer{kNoTimer};

intptr_t timer_word(timer_t t) { return reinterpret_cast<intptr_t>(t); }
timer_t word_timer(intptr_t w) { return reinterpret_cast<timer_t>(w); }

thread_local volatile uint8_t* t_immediate_exit = nullptr;
thread_local volatile sig_atomic_t t_kicked = 0;

itimerspec kick_in(int64_t ns) {
  itimerspec its{};
  its.it_value.tv_sec = ns / 1000000000;
  its.it_value.tv_nsec = ns % 1000000000;
  if (ns <= 0) its.it_value.tv_nsec = 1;
  its.it_interval.tv_nsec = kRekickNs;
  return its;
}

void on_host_signal(int sig, siginfo_t* si, void*) {
  int saved = errno;
  g_host_code[sig].store(si->si_code);
  g_host_pid[sig].store(si->si_pid);
  g_host_uid[sig].store(si->si_uid);
  g_host_pending.fetch_or(sigbit(sig));
  g_rekick.store(true);
  if (intptr_t t = g_kick_timer.load(); t != kNoTimer) {
    itimerspec its = kick_in(0);
    timer_settime(word_timer(t), 0, &its, nullptr);
  }
  errno = saved;
}

void on_kick(int) {
  t_kicked = 1;
  if (t_immediate_exit) *t_immediate_exit = 1;
}

void install_kick_handler() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_kick;  // no SA_RESTART: a blocking host call returns EINTR
    sigemptyset(&sa.sa_mask);
    sigaction(kick_signal(), &sa, nullptr);
    return true;
  }();
  (void)installed;
}

}  // namespace

void unblock_vmha_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kRelayed) sigaddset(&set, sig);
  sigaddset(&set, kick_signal());
  sigaddset(&set, pause_signal());
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void relay_host_signals() {
  unblock_vmha_signals();  // on this (the vCPU) thread, whatever the parent blocked
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_host_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;  // vmha's own threads go on undisturbed
    sigemptyset(&sa.sa_mask);
    for (int sig : kRelayed) sigaction(sig, &sa, nullptr);
    return true;
  }();
  (void)installed;
}

uint64_t take_host_signals() { return g_host_pending.exchange(0); }

void collect_signals(SignalState& s) {
  if (uint64_t host = take_host_signals()) {
    for (int sig = 1; sig <= kMaxSignal; ++sig) {
      if (!(host & sigbit(sig))) continue;
      GuestSiginfo si;  // as the host gave it: the sender's pid and uid
      si.code = g_host_code[sig].load();
      si.set_u32(0, static_cast<uint32_t>(g_host_pid[sig].load()));
      si.set_u32(4, g_host_uid[sig].load());
      s.raise(sig, si);
    }
  }
  s.expire_timers();
}

Status VcpuKick::start(volatile uint8_t* immediate_exit) {
  stop();
  install_kick_handler();
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = kick_signal();
  ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer_) < 0) return Status::error(errno_text("timer_create (signal kick)"));
  started_ = true;
  aimed_at_ = -1;
  t_immediate_exit = immediate_exit;
  t_kicked = 0;
  g_kick_timer.store(timer_word(timer_));
  if (g_host_pending.load()) aim(0);  // received before the vCPU started
  return Status();
}

void VcpuKick::stop() {
  if (!started_) return;
  intptr_t mine = timer_word(timer_);
  g_kick_timer.compare_exchange_strong(mine, kNoTimer);
  timer_delete(timer_);
  started_ = false;
  t_immediate_exit = nullptr;
}

void VcpuKick::aim(int64_t ns) {
  if (!started_) return;
  timespec now{};
  if (ns > 0) clock_gettime(CLOCK_MONOTONIC, &now);
  const int64_t at = ns < 0 ? -1 : ns == 0 ? 0 : now.tv_sec * 1000000000LL + now.tv_nsec + ns;
  // Within a microsecond of the same moment: the timer is set already.
  const bool same = ns != 0 && (at < 0 ? aimed_at_ < 0 : aimed_at_ > 0 && at - aimed_at_ < 1000 && aimed_at_ - at < 1000);
  if (same && !g_host_pending.load()) return;
  aimed_at_ = at;
  itimerspec its{};
  if (ns >= 0) its = kick_in(ns);
  timer_settime(timer_, 0, &its, nullptr);
  // A host signal that came in just before this may have aimed the timer at
  // once and been overwritten here: until the VMM takes it, kick now.
  if (ns != 0 && g_host_pending.load()) {
    its = kick_in(0);
    timer_settime(timer_, 0, &its, nullptr);
  }
}

bool VcpuKick::take_kicked() {
  if (!t_kicked) return false;
  t_kicked = 0;
  return true;
}

bool VcpuKick::take_rekick() { return g_rekick.exchange(false); }

bool wait_for_kick(const std::function<bool()>& ready, int64_t timeout_ns) {
  sigset_t hold, old;
  sigemptyset(&hold);
  sigaddset(&hold, kick_signal());
  sigaddset(&hold, pause_signal());
  for (int sig : kRelayed) sigaddset(&hold, sig);
  pthread_sigmask(SIG_BLOCK, &hold, &old);
  bool r = ready();
  if (!r) {
    timespec ts{timeout_ns / 1000000000, timeout_ns % 1000000000};
    sigset_t during = old;
    for (int sig : {kick_signal(), pause_signal()}) sigdelset(&during, sig);
    ppoll(nullptr, 0, timeout_ns >= 0 ? &ts : nullptr, &during);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return r;
}

}  // namespace vmha
