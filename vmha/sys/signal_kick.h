// The host side of guest signals: host signals vmha passes on to its guest
// (Slurm's scancel, time limit and --signal reach vmha, not the guest), and
// the kick that brings the vCPU thread to a safe point when one is due.
//
// A kick is a host timer aimed at the vCPU thread (SIGRTMIN+6): its handler
// sets KVM's immediate_exit, so KVM_RUN returns at once or is cut short, and
// a blocking host call on that thread returns EINTR. Until the VMM takes what
// the kick announced, the timer repeats every 2 ms: a kick that lands just
// before a blocking host call is not lost.
#pragma once
#include <time.h>

#include <cstdint>
#include <functional>

#include "vmha/common/status.h"
#include "vmha/sys/signal_state.h"

namespace vmha {

// SIGTERM, SIGINT, SIGHUP, SIGUSR1 and SIGUSR2 received by this process
// become guest signals from now on (process-wide, idempotent); the calling
// thread unblocks them.
void relay_host_signals();
// Unblocks on the calling thread (and the threads it starts later) the
// relayed host signals and vmha's own kick and pause signals: a signal mask
// inherited from vmha's parent (exec keeps it) would hold back scancel's
// SIGTERM and every epoch pause.
void unblock_vmha_signals();
// The relayed host signals received since the last call (sigbit set).
uint64_t take_host_signals();

// Host signals and due timers into the pending set (the VMM's safe points
// and the blocking signal calls call this).
void collect_signals(SignalState& s);

class VcpuKick {
 public:
  VcpuKick() = default;
  VcpuKick(const VcpuKick&) = delete;
  VcpuKick& operator=(const VcpuKick&) = delete;
  ~VcpuKick() { stop(); }

  // On the vCPU thread: the timer, aimed at this thread; a kick sets
  // *immediate_exit. Relayed host signals kick this thread from now on.
  Status start(volatile uint8_t* immediate_exit);
  void stop();
  // The next kick in `ns` nanoseconds (-1: none), repeating every 2 ms.
  void aim(int64_t ns);
  // True once after a kick landed on this thread.
  bool take_kicked();
  // True once after a relayed host signal re-aimed the timer.
  static bool take_rekick();

 private:
  timer_t timer_{};
  bool started_ = false;
  // When the timer was last aimed to go off (CLOCK_MONOTONIC ns; -1:
  // disarmed), so that aiming it at the same moment again (the run loop does
  // after every system call) costs no host call. A kick that fired re-arms
  // itself every 2 ms: aimed_at_ stays >= 0 until the VMM disarms it.
  int64_t aimed_at_ = -1;
};

// On the vCPU thread: sleeps until a kick, an epoch pause's signal or a
// relayed host signal arrives, or `timeout_ns` (-1: no limit) passes, unless
// `ready()` (checked with those signals held back, so none is missed) is
// already true. Returns ready()'s answer before the sleep.
bool wait_for_kick(const std::function<bool()>& ready, int64_t timeout_ns);

}  // namespace vmha
