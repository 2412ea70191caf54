#include "vmha/sys/signal_state.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>

namespace vmha {

namespace {

// siginfo's union, from byte 16: kill (pid, uid), timer (tid, overrun, value).
constexpr size_t kPid = 0, kUid = 4, kTimerId = 0, kOverrun = 4, kValue = 8;

}  // namespace

bool default_ignores(int sig) {
  switch (sig) {
    case SIGCHLD:
    case SIGURG:
    case SIGWINCH:
    case SIGCONT:
    case SIGSTOP:  // stopping is not supported: the guest goes on
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return true;
    default:
      return false;
  }
}

int64_t SignalState::now_ns(int clock) {
  timespec ts{};
  clock_gettime(static_cast<clockid_t>(clock), &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void SignalState::raise(int sig, const GuestSiginfo& si) {
  if (sig < 1 || sig > kMaxSignal) return;
  if (pending & sigbit(sig)) return;  // standard signals do not queue
  pending |= sigbit(sig);
  info[sig] = si;
  info[sig].signo = sig;
}

void SignalState::raise(int sig, int code) {
  GuestSiginfo si;
  si.code = code;
  if (code != SI_KERNEL) {
    si.set_u32(kPid, static_cast<uint32_t>(getpid()));
    si.set_u32(kUid, static_cast<uint32_t>(getuid()));
  }
  raise(sig, si);
}

void SignalState::expire_timers() {
  for (int slot = 0; slot <= kMaxTimers; ++slot) {
    GuestTimer& t = timers[slot];
    if (!t.used || t.deadline_ns == 0) continue;
    int64_t now = now_ns(t.clock);
    if (now < t.deadline_ns) continue;
    uint64_t n = 1;
    if (t.interval_ns > 0) {
      n += static_cast<uint64_t>((now - t.deadline_ns) / t.interval_ns);
      t.deadline_ns += static_cast<int64_t>(n) * t.interval_ns;
    } else {
      t.deadline_ns = 0;
    }
    timers_changed = true;
    if (!t.notify) continue;
    uint32_t pending_id = ~0u;
    std::memcpy(&pending_id, info[t.signo].fields + kTimerId, 4);
    bool ours_pending =
        (pending & sigbit(t.signo)) && info[t.signo].code == SI_TIMER && pending_id == static_cast<uint32_t>(slot - 1);
    if (slot == 0) {
      raise(t.signo, SI_KERNEL);
    } else if (ours_pending) {
      t.overrun += static_cast<uint32_t>(n);
    } else {
      GuestSiginfo si;
      si.code = SI_TIMER;
      si.set_u32(kTimerId, static_cast<uint32_t>(slot - 1));
      si.set_u64(kValue, t.value);
      raise(t.signo, si);
      t.overrun += static_cast<uint32_t>(n - 1);
    }
  }
}

uint64_t SignalState::deliverable(uint64_t mask, const SigactionTable& actions) {
  uint64_t open = pending & ~(mask & ~kUnblockable);
  if (!open) return 0;
  for (int sig = 1; sig <= kMaxSignal; ++sig) {
    if (!(open & sigbit(sig))) continue;
    uint64_t h = actions[sig].handler;
    if (sig != SIGKILL && (h == kSigIgn || (h == kSigDfl && default_ignores(sig)))) {
      pending &= ~sigbit(sig);
      open &= ~sigbit(sig);
    }
  }
  return open;
}

int SignalState::take(uint64_t set, GuestSiginfo* out) {
  uint64_t ready = pending & set;
  if (!ready) return 0;
  // SIGKILL first, then the lowest number (Linux takes synchronous ones first;
  // the VMM raises none here).
  int sig = (ready & sigbit(SIGKILL)) ? SIGKILL : __builtin_ctzll(ready) + 1;
  pending &= ~sigbit(sig);
  *out = info[sig];
  if (out->code == SI_TIMER) {
    uint32_t id;
    std::memcpy(&id, out->fields + kTimerId, 4);
    if (id < kMaxTimers) {
      GuestTimer& t = timers[id + 1];
      t.last_overrun = t.overrun;
      t.overrun = 0;
      out->set_u32(kOverrun, t.last_overrun);
    }
  }
  return sig;
}

int64_t SignalState::next_due_ns() const {
  int64_t best = -1;
  for (const GuestTimer& t : timers) {
    if (!t.used || t.deadline_ns == 0) continue;
    int64_t left = std::max<int64_t>(0, t.deadline_ns - now_ns(t.clock));
    if (best < 0 || left < best) best = left;
  }
  return best;
}

bool SignalState::active() const {
  if (pending || altstack.flags != SS_DISABLE || saved_mask) return true;
  return std::any_of(timers.begin(), timers.end(), [](const GuestTimer& t) { return t.used; });
}

}  // namespace vmha
