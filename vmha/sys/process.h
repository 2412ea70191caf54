// Process: the VMM-side operating-system state of the guest program — what a
// kernel keeps per process (fds, signal dispositions, working directory,
// exit status). The syscall handlers operate on it; the VM owns it.
#pragma once
#include <time.h>

#include <array>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "vmha/mem/address_space.h"
#include "vmha/output/output_sink.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/fd_table.h"
#include "vmha/sys/signal_state.h"
#include "vmha/sys/threads.h"

namespace vmha {

struct GuestExit {
  bool requested = false;
  bool by_signal = false;
  int code = 0;  // exit status, or signal number when by_signal
};

struct Process {
  explicit Process(AddressSpace& a) : as(a) {}
  AddressSpace& as;
  FdTable fds;
  Confinement root;
  OutputSink* out = nullptr;
  SigactionTable sigactions{};
  uint64_t sigmask = 0;
  SignalState signals;  // pending set, alternate stack, timers (sys/signal_state.h)
  ThreadTable threads;  // the guest's threads and futex waits (sys/threads.h)
  GuestExit exit;
  uint64_t fs_base = 0;
  bool fs_base_changed = false;
  // The deadline of a timed call (a relative sleep, a poll) cut short by a
  // pause: the vCPU thread is signalled out of the host's call, the call
  // restarts after the pause and waits only until this deadline, never
  // returning a spurious EINTR. Not in checkpoints: a backup that resumes
  // before such a call waits its whole timeout again.
  struct CallDeadline {
    clockid_t clock;
    timespec at;
  };
  std::optional<CallDeadline> call_deadline;
  bool log_unsupported = true;
  std::set<uint64_t> logged;  // syscalls already reported as unsupported
  std::string log_prefix = "vmha: ";

  // Ends the guest as if the signal were delivered with its default action.
  void die_by_signal(int sig) { exit = {true, true, sig}; }
  // Reports something once per key (unsupported syscall numbers).
  void log_once(uint64_t key, const std::string& message);
};

}  // namespace vmha
