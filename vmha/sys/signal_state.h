// SignalState: what a kernel keeps per process for signals besides the
// dispositions and the mask (Process::sigactions, Process::sigmask, which the
// version-1 state already carries): the pending set with each signal's
// siginfo, the alternate stack, the mask saved by rt_sigsuspend and the
// timers (ITIMER_REAL and timer_create's) with their deadlines.
// The VMM turns due timers and host signals into pending signals at its safe
// points (collect) and delivers them on the guest stack (vmm/signal_delivery).
#pragma once
#include <time.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

namespace vmha {

constexpr int kMaxSignal = 64;
constexpr uint64_t sigbit(int sig) { return 1ull << (sig - 1); }
// SIGKILL and SIGSTOP are never blocked, caught or ignored.
constexpr uint64_t kUnblockable = sigbit(9) | sigbit(19);

struct KernelSigaction {  // the kernel's struct sigaction on x86-64
  uint64_t handler = 0, flags = 0, restorer = 0, mask = 0;
};
using SigactionTable = std::array<KernelSigaction, kMaxSignal + 1>;
constexpr uint64_t kSigDfl = 0, kSigIgn = 1;
// sa_flags the VMM acts on.
constexpr uint64_t kSaSiginfo = 4, kSaOnstack = 0x08000000, kSaRestart = 0x10000000, kSaNodefer = 0x40000000,
                   kSaResethand = 0x80000000, kSaRestorer = 0x04000000;

// The kernel's siginfo_t: 128 bytes, signo/errno/code first.
struct GuestSiginfo {
  int32_t signo = 0, err = 0, code = 0, pad = 0;
  uint8_t fields[112] = {};
  void set_u32(size_t off, uint32_t v) { std::memcpy(fields + off, &v, 4); }
  void set_u64(size_t off, uint64_t v) { std::memcpy(fields + off, &v, 8); }
};
static_assert(sizeof(GuestSiginfo) == 128);

// stack_t as the guest passes it to sigaltstack.
struct GuestStack {
  uint64_t sp = 0;
  int32_t flags = 2;  // SS_DISABLE
  int32_t pad = 0;
  uint64_t size = 0;
};
static_assert(sizeof(GuestStack) == 24);

// One timer: slot 0 is ITIMER_REAL (alarm, setitimer), slots 1.. are
// timer_create's timers (guest id = slot - 1). Deadlines are nanoseconds on
// the timer's own clock; 0 means disarmed.
struct GuestTimer {
  bool used = false;
  int32_t clock = CLOCK_MONOTONIC;
  int32_t signo = 14;  // SIGALRM
  bool notify = true;  // false: SIGEV_NONE
  uint64_t value = 0;  // sigev_value
  int64_t deadline_ns = 0, interval_ns = 0;
  uint32_t overrun = 0;       // expiries while its signal was still pending
  uint32_t last_overrun = 0;  // what timer_getoverrun reports
};

constexpr int kMaxTimers = 32;  // timer_create timers

struct SignalState {
  uint64_t pending = 0;
  std::array<GuestSiginfo, kMaxSignal + 1> info{};
  GuestStack altstack;
  std::optional<uint64_t> saved_mask;  // rt_sigsuspend's: the frame saves this one
  std::array<GuestTimer, kMaxTimers + 1> timers{};
  bool timers_changed = true;  // the VMM re-aims its host kick timer
  uint64_t syscall_sp = 0;     // the guest's rsp at the current system call (not saved)

  // Current time on a guest timer's clock, in nanoseconds.
  static int64_t now_ns(int clock);
  // Makes `sig` pending with `info` (a second one while pending merges, as
  // Linux does for standard signals).
  void raise(int sig, const GuestSiginfo& info);
  void raise(int sig, int code);  // SI_USER/SI_TKILL/SI_KERNEL from this process
  // Due timers become pending signals; re-armed or disarmed.
  void expire_timers();
  // Pending, unblocked signals whose action is to ignore them are dropped;
  // returns what is left to deliver under `mask`.
  uint64_t deliverable(uint64_t mask, const SigactionTable& actions);
  // Removes the lowest signal of `set` and returns it (0 when none).
  int take(uint64_t set, GuestSiginfo* info);
  // Nanoseconds on CLOCK_MONOTONIC until the first armed timer is due
  // (0 when it is), or -1 with no timer armed.
  int64_t next_due_ns() const;
  bool active() const;  // anything here that the version-1 state lacks
};

// The default action of a signal (signal(7)); stop signals are ignored.
bool default_ignores(int sig);

}  // namespace vmha
