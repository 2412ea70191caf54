// ProcessTree: every guest process of the VM — the first one and those it
// forks — with their parent links, process groups, sessions and zombies.
//
// Design: all processes live in the SAME VM and share its one GuestMemory
// (one registration, one frame allocator, one dirty tracker), so
// replication, the dirty ring and the memory region need no change for a
// tree. Each process has its own page tables and address space, fd table,
// signal state and threads; the vCPU takes turns over every (process,
// thread) pair as it does over threads (sys/threads.h), loading the
// process's page tables on a switch (vmm/thread_switch.cc). A separate VM
// per process would need one memory registration, dirty ring and vCPU
// thread each, and a checkpoint that pauses them all together; here a
// pause finds every process either on the vCPU or as data, as for threads.
// The price is the same as for threads: the tree shares one host CPU.
//
// fork copies the parent's backed pages eagerly into fresh frames (the
// simplest exact copy; `vmha bench` reports its cost), duplicates the fd
// table (host descriptors dup'ed, so both share the open file description;
// pipes and socketpairs keep their channel), the signal dispositions and
// mask; only the calling thread goes to the child. vfork and clone with
// CLONE_VM|CLONE_VFORK share the parent's address space until the child
// execs or ends, the parent's thread waiting meanwhile, as Linux does.
//
// Process ids are the VMM's: the first process keeps the host process's id
// (what getpid answered before trees), children get ids from
// kFirstChildPid up, so a backup that restores the tree gives the same ids.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "vmha/mem/guest_memory.h"
#include "vmha/sys/process.h"
#include "vmha/sys/removed_files.h"

namespace vmha {

constexpr int32_t kFirstChildPid = 1 << 21;  // below kFirstThreadId
constexpr size_t kMaxProcesses = 512;
// ThreadWait::options of a vfork parent waiting for its child to exec or end.
constexpr uint32_t kVforkWait = 1u << 31;

// Linux's wait status of a process that ended as `e` says.
int wait_status_of(const GuestExit& e);

class ProcessTree {
 public:
  explicit ProcessTree(GuestMemory& mem) : mem_(mem) {}

  // The first process (pid: the host's getpid(), its own group and session).
  Process& add_root(std::unique_ptr<Process> p);
  Process& root() { return *procs_.front(); }
  std::vector<std::unique_ptr<Process>>& all() { return procs_; }
  const std::vector<std::unique_ptr<Process>>& all() const { return procs_; }
  bool several() const { return procs_.size() > 1; }
  Process* find(int32_t pid);
  // A live (not zombie) process of group `pgid`.
  bool group_exists(int32_t pgid) const;

  // fork/vfork/clone of `parent`'s current thread: the new process, or
  // nullptr with *err (-EAGAIN: too many, -ENOMEM: memory).
  Process* fork(Process& parent, bool share_memory, int* err);
  // The child fork just made, once: the VMM gives its thread the parent's
  // registers with rax = 0 (and rsp = `stack` when one was given).
  struct Birth {
    int32_t pid;
    uint64_t stack;
  };
  std::optional<Birth> take_birth() { return std::exchange(birth_, std::nullopt); }
  void set_birth(Birth b) { birth_ = b; }

  // Process `p` ended (p.exit says how): its memory and descriptors are
  // released, its children go to the first process, it becomes a zombie for
  // its parent (or is reaped at once when the parent ignores SIGCHLD), the
  // parent gets SIGCHLD and its matching waits finish. Not the first process.
  void end(Process& p);
  // A vfork child no longer borrows its parent's memory (exec or end): the
  // parent's waiting thread goes on with the child's pid.
  void release_vfork_parent(Process& child);
  // Drops the processes nobody will wait for any more (reaped zombies),
  // except `keep` (the one whose registers the vCPU may still hold).
  void collect(const Process* keep);

  // wait4/waitid for the calling thread of `parent` as `w` describes:
  // a child's pid (or 0 for waitid) with the answer written, 0 when matching
  // children live on and WNOHANG was given, -ECHILD, -EFAULT, -EINVAL; or
  // kSwitchThread when the thread now waits.
  int64_t wait(Process& parent, const ThreadWait& w);

  // Whether a guest thread other than `p`'s current one could run now (in
  // `p` or another process): a host call that would block then gives the
  // vCPU up instead (kRetryLater).
  bool others_runnable(const Process& p) const;

  // Page tables for a new address space: a tree an ended process left
  // (page_table.h says why tables are never freed), else new ones with the
  // VMM's pages mapped as in the first process's. nullptr: memory ran out.
  std::unique_ptr<PageTable> take_tables();
  const std::vector<std::unique_ptr<PageTable>>& spare_tables() const { return spare_; }
  void add_spare_tables(std::unique_ptr<PageTable> pt) { spare_.push_back(std::move(pt)); }

  // Files the guest removed that a backup may still need (removed_files.h).
  RemovedFiles& removed() { return removed_; }

  int32_t next_pid() const { return next_pid_; }
  // For restore.
  void replace(std::vector<std::unique_ptr<Process>> procs, int32_t next_pid);

 private:
  // The answer for a child that matches `w`, written to the parent; reaps it
  // unless WNOWAIT. Returns what the call returns.
  int64_t report(Process& parent, Process& child, const ThreadWait& w);
  // -1 when none matches `w`, 0 when some do but none ended, else the index.
  int find_ended(const Process& parent, const ThreadWait& w, bool* any) const;
  int32_t alloc_pid();

  GuestMemory& mem_;
  std::vector<std::unique_ptr<Process>> procs_;
  int32_t next_pid_ = kFirstChildPid;
  std::optional<Birth> birth_;
  std::vector<std::unique_ptr<PageTable>> spare_;
  RemovedFiles removed_;
};

// Whether anything else could run on vCPU 0 while p's thread waits: another
// thread of p or another process. Then a wait (pause, a sleep, a signal
// wait) is a record in the thread table that leaves the vCPU to them; a
// host sleep on the vCPU thread would stop them until the next kick.
inline bool shares_vcpu(const Process& p) { return p.threads.several() || (p.tree && p.tree->several()); }

}  // namespace vmha
