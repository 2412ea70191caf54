// Guest threads: what a kernel keeps per thread of the guest process (its
// id, the word cleared at its exit, its signal mask and TLS base, what it
// waits for) and the futex wait queues.
//
// Design: the guest's threads take turns on vCPU 0 (the VMM saves one
// thread's registers and loads another's) instead of one vCPU and host
// thread each serving its own system calls. Helper vCPUs
// (vmm/helper_vcpus.h) add parallel user code without changing this
// picture: they run only while vCPU 0 runs and their threads are data
// again before the VMM does anything. A thread switches out when it blocks (futex wait, a
// sleep), yields, exits, or its time slice ends (a kick, vmm/vm_run.cc).
// Why: a pause, a save and a restore then see every thread at a consistent
// point for free (the ones not on the vCPU are data here, a blocked one is a
// wait record and not a host thread inside a system call), and the
// system-call layer needs no locks. The price: system calls are served one
// at a time on vCPU 0, and a host call that blocks
// holds the vCPU for the rest of its thread's time slice: the slice's kick
// cuts it, the thread waits before the call, and it runs the call again at
// its next turn. A read of an empty pipe, a write to a full one and a poll
// look first and give the vCPU up (kRetryLater) while another thread or
// process could run. Processes take turns the same way (process_tree.h).
//
// The system calls (thread_calls.cc, futex_calls.cc) change this table and
// answer kSwitchThread when the calling thread must leave the vCPU; the VMM
// then picks the next runnable one (vmm/thread_switch.cc).
#pragma once
#include <time.h>

#include <cstdint>
#include <climits>
#include <optional>
#include <utility>
#include <vector>

namespace vmha {

// A system call's answer that the guest never sees: the calling thread
// blocked, yielded or exited; run another (its own answer comes later, as
// GuestThread::result).
constexpr long kSwitchThread = -600;
// Another answer the guest never sees: the call would block on the host
// (an empty pipe, a full one) while another guest thread or process could
// run; the calling thread goes back before the call, gives up the vCPU and
// runs the call again at its next turn.
constexpr long kRetryLater = -601;

// Ids of the threads the guest starts: above any pid Linux gives
// (PID_MAX_LIMIT), so none is ever the process's own id, on this host or on
// the backup that restores it. The main thread's id is the process's.
constexpr int32_t kFirstThreadId = 1 << 22;
constexpr size_t kMaxThreads = 1024;

struct ThreadWait {
  // kSignal: pause, or rt_sigtimedwait for the signals in `sigset`; a
  // signal cuts it (the call then runs again and finds it, or ends in EINTR).
  // kChild: wait4/waitid for a child that has not ended yet; the child's
  // exit completes the call (sys/process_tree.h).
  enum class Kind : uint32_t { kNone = 0, kFutex = 1, kSleep = 2, kSignal = 3, kChild = 4 };
  Kind kind = Kind::kNone;
  uint64_t futex = 0;  // guest virtual address of the futex word
  uint32_t bitset = ~0u;
  uint64_t sigset = 0;  // kSignal: what rt_sigtimedwait waits for
  bool timed = false;
  int32_t clock = CLOCK_MONOTONIC;
  int64_t deadline_ns = 0;  // on `clock`
  uint64_t seq = 0;         // FIFO order of the waiters
  // kChild: which children (wait4's pid argument: >0 one, -1 any, 0 own
  // group, <-1 group -pid), where the answer goes (wait4's status or
  // waitid's siginfo, and rusage), the options, and which call it was.
  int64_t child = 0;
  uint64_t out_va = 0, rusage_va = 0;
  uint32_t options = 0;
  bool waitid = false;
};

struct GuestThread {
  int32_t tid = 0;  // 0: the main thread (its id is the process's)
  uint64_t clear_child_tid = 0;
  // Saved here while the thread is off the vCPU; the current thread's live in
  // Process::sigmask and Process::fs_base.
  uint64_t sigmask = 0;
  uint64_t fs_base = 0;
  ThreadWait wait;
  bool in_call = false;  // stopped inside a system call: resumes with rax = result
  int64_t result = 0;
  // Off the vCPU before a call it runs again (a host call the kick cut
  // short), with the deadline of that call when it had one: the VMM's
  // restart flag and Process::call_deadline while it runs.
  bool restart = false;
  std::optional<std::pair<int32_t, timespec>> call_deadline;
  bool exited = false;
  bool runnable() const { return !exited && wait.kind == ThreadWait::Kind::kNone; }
};

class ThreadTable {
 public:
  ThreadTable() { threads_.emplace_back(); }

  std::vector<GuestThread>& all() { return threads_; }
  const std::vector<GuestThread>& all() const { return threads_; }
  size_t current_index() const { return current_; }
  GuestThread& current() { return threads_[current_]; }
  const GuestThread& current() const { return threads_[current_]; }
  size_t live() const;            // threads that have not exited
  bool several() const { return threads_.size() > 1; }
  // Anything here that a single-threaded VM state lacks (state version 3).
  bool active() const;
  GuestThread* find(int32_t tid);  // by guest id (the process's id: the main thread)
  int32_t guest_id(const GuestThread& t) const;
  // The process's id: the main thread's (getpid() until set).
  void set_pid(int32_t pid) { pid_ = pid; }

  // Starts a thread (clone); its registers are the VMM's to set (born()).
  GuestThread* add(int32_t* tid);
  // The thread clone just made, once: the VMM gives it the parent's registers
  // with rsp = the new stack.
  struct Birth {
    int32_t tid;
    uint64_t stack;
  };
  std::optional<Birth> take_birth() { return std::exchange(birth_, std::nullopt); }
  void set_birth(Birth b) { birth_ = b; }

  // The calling thread waits; the system call then answers kSwitchThread.
  void block(ThreadWait w);
  // Wakes up to `n` waiters on `futex` whose bitset meets `bitset`, oldest
  // first; returns how many.
  int wake(uint64_t futex, uint32_t bitset, int n);
  // Moves up to `n` waiters of `from` to `to` (FUTEX_CMP_REQUEUE).
  int requeue(uint64_t from, uint64_t to, int n);
  // Timed waits that are due end (ETIMEDOUT for a futex, 0 for a sleep,
  // EAGAIN for rt_sigtimedwait); true when one did.
  bool expire(int64_t now_mono, int64_t now_real, int64_t now_boot);
  // Nanoseconds until the first timed wait is due (0: already), -1: none.
  int64_t next_due_ns() const;
  // Ends a thread's wait with `result` (kWaitForRelease: a signal cut it).
  void interrupt(GuestThread& t, int64_t result);

  // Next runnable thread after the current one, round robin (the current one
  // last); nullopt when none is.
  std::optional<size_t> pick() const;
  void set_current(size_t i) { current_ = i; }
  // The current thread gave up its turn (it yielded or its slice ended)
  // when another process was scheduled: at the process's next turn another
  // of its threads goes first, or one that always yields (a poll loop)
  // would take every turn of its process from the others.
  bool turn_passed() const { return turn_passed_; }
  void set_turn_passed(bool passed) { turn_passed_ = passed; }
  // Drops exited threads that are not current; keeps current_ pointing at
  // the same thread.
  void reap();
  // For restore.
  void replace(std::vector<GuestThread> threads, size_t current, int32_t next_tid, uint64_t seq);
  int32_t next_tid() const { return next_tid_; }
  uint64_t wait_seq() const { return seq_; }

 private:
  std::vector<GuestThread> threads_;
  size_t current_ = 0;
  int32_t next_tid_ = kFirstThreadId;
  int32_t pid_ = 0;
  uint64_t seq_ = 0;
  bool turn_passed_ = false;
  std::optional<Birth> birth_;
};

// Current time on a wait's clock in nanoseconds (sys/signal_state.cc's clocks).
int64_t thread_clock_ns(int clock);

}  // namespace vmha
