// Process: the VMM-side operating-system state of one guest process — what a
// kernel keeps per process (address space, fds, signal dispositions, working
// directory, ids, exit status). The syscall handlers operate on it; the
// process tree (sys/process_tree.h) owns every one.
#pragma once
#include <time.h>

#include <array>

#include <cstdint>
#include <memory>
#include <vector>
#include <optional>
#include <set>
#include <string>

#include "vmha/mem/address_space.h"
#include "vmha/output/output_sink.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/fd_table.h"
#include "vmha/sys/shared_file_maps.h"
#include "vmha/sys/signal_state.h"
#include "vmha/sys/threads.h"

namespace vmha {

struct GuestExit {
  bool requested = false;
  bool by_signal = false;
  int code = 0;  // exit status, or signal number when by_signal
};

class ProcessTree;

// What execve asked for, done by the VMM (it loads programs): the guest path
// as the guest named it, the argument and environment strings.
struct ExecRequest {
  std::string path;
  std::vector<std::string> argv, envp;
};

struct Process {
  explicit Process(AddressSpace& a) : as(&a) {}
  // The address space in use: its own (own_as), or for a vfork child until it
  // execs or exits, its parent's.
  AddressSpace* as;
  std::unique_ptr<PageTable> own_pt;
  std::unique_ptr<AddressSpace> own_as;
  ProcessTree* tree = nullptr;
  int32_t pid = 0, ppid = 0, pgid = 0, sid = 0;
  // A vfork child borrows its parent's memory; the parent's calling thread
  // waits (ThreadWait::kChild with options kVforkWait) until it execs or ends.
  bool vfork_child = false;
  bool zombie = false;   // ended, not yet reaped by its parent
  int wait_status = 0;   // as wait4 reports it, once ended
  std::optional<ExecRequest> exec;  // execve's request, for the VMM
  std::string exe;                  // the program's absolute path, for /proc/self/exe ("": not known)
  FdTable fds;
  SharedFileMaps shared_files;  // writable MAP_SHARED file mappings
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
