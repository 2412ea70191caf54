#include "vmha/sys/process_tree.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "vmha/sys/signal_state.h"

namespace vmha {

namespace {

// The top-level page-table entry that maps the VMM's pages (layout::kKernelBase).
constexpr int kKernelTopEntry = 511;
constexpr uint64_t kSaNocldwait = 2;

bool matches(const Process& parent, const Process& c, int64_t sel) {
  if (c.ppid != parent.pid) return false;
  if (sel > 0) return c.pid == sel;
  if (sel == -1) return true;
  if (sel == 0) return c.pgid == parent.pgid;
  return c.pgid == -sel;
}

}  // namespace

int wait_status_of(const GuestExit& e) { return e.by_signal ? (e.code & 0x7f) : ((e.code & 0xff) << 8); }

Process& ProcessTree::add_root(std::unique_ptr<Process> p) {
  p->tree = this;
  if (!p->pid) {
    p->pid = static_cast<int32_t>(getpid());
    p->ppid = static_cast<int32_t>(getppid());
    p->pgid = static_cast<int32_t>(getpgrp());
    p->sid = static_cast<int32_t>(getsid(0));
  }
  p->threads.set_pid(p->pid);
  procs_.insert(procs_.begin(), std::move(p));
  return *procs_.front();
}

Process* ProcessTree::find(int32_t pid) {
  for (auto& p : procs_)
    if (p->pid == pid) return p.get();
  return nullptr;
}

bool ProcessTree::group_exists(int32_t pgid) const {
  return std::any_of(procs_.begin(), procs_.end(), [&](const auto& p) { return !p->zombie && p->pgid == pgid; });
}

int32_t ProcessTree::alloc_pid() {
  for (;;) {
    int32_t pid = next_pid_++;
    if (next_pid_ >= kFirstThreadId) next_pid_ = kFirstChildPid;
    if (!find(pid)) return pid;
  }
}

Process* ProcessTree::fork(Process& parent, bool share_memory, int* err) {
  if (procs_.size() >= kMaxProcesses) {
    *err = -EAGAIN;
    return nullptr;
  }
  std::unique_ptr<Process> child;
  if (share_memory) {
    child = std::make_unique<Process>(*parent.as);
    child->vfork_child = true;
  } else {
    auto pt = take_tables();
    if (!pt) {
      *err = -ENOMEM;
      return nullptr;
    }
    auto as = std::make_unique<AddressSpace>(mem_, *pt);
    if (!as->copy_from(*parent.as)) {
      as->release_all();
      spare_.push_back(std::move(pt));
      *err = -ENOMEM;
      return nullptr;
    }
    child = std::make_unique<Process>(*as);
    child->own_pt = std::move(pt);
    child->own_as = std::move(as);
  }
  Process& c = *child;
  if (!c.root.open_like(parent.root).ok()) {
    if (c.own_as) {
      c.own_as->release_all();
      spare_.push_back(std::move(c.own_pt));
    }
    *err = -ENOMEM;
    return nullptr;
  }
  c.tree = this;
  c.pid = alloc_pid();
  c.ppid = parent.pid;
  c.pgid = parent.pgid;
  c.sid = parent.sid;
  c.threads.set_pid(c.pid);
  c.fds.fork_from(parent.fds);
  if (!share_memory) c.shared_files.fork_from(parent.shared_files);
  c.exe = parent.exe;
  c.out = parent.out;
  c.sigactions = parent.sigactions;
  c.sigmask = parent.sigmask;
  c.signals.altstack = parent.signals.altstack;
  c.fs_base = parent.fs_base;
  c.fs_base_changed = true;
  c.threads.current().sigmask = parent.sigmask;
  c.threads.current().fs_base = parent.fs_base;
  c.log_unsupported = parent.log_unsupported;
  c.logged = parent.logged;
  c.log_prefix = parent.log_prefix;
  procs_.push_back(std::move(child));
  return &c;
}

std::unique_ptr<PageTable> ProcessTree::take_tables() {
  if (!spare_.empty()) {
    std::unique_ptr<PageTable> pt = std::move(spare_.back());
    spare_.pop_back();
    return pt;
  }
  auto pt = std::make_unique<PageTable>(mem_);
  if (!pt->init()) return nullptr;
  pt->share_top_entry(root().as->page_table(), kKernelTopEntry);
  return pt;
}

void ProcessTree::release_vfork_parent(Process& child) {
  if (!child.vfork_child) return;
  child.vfork_child = false;
  if (Process* parent = find(child.ppid))
    for (GuestThread& t : parent->threads.all())
      if (!t.exited && t.wait.kind == ThreadWait::Kind::kChild && (t.wait.options & kVforkWait) &&
          t.wait.child == child.pid)
        parent->threads.interrupt(t, child.pid);
}

void ProcessTree::end(Process& p) {
  p.shared_files.write_back_all(p);
  p.shared_files.clear();
  p.fds.close_all();
  if (p.vfork_child) {
    release_vfork_parent(p);
  } else if (p.own_as) {
    p.own_as->release_all();
    spare_.push_back(std::move(p.own_pt));  // p.as is not used again
  }
  for (GuestThread& t : p.threads.all()) t.exited = true;
  p.signals.pending = 0;
  for (auto& timer : p.signals.timers) timer = GuestTimer{};
  p.wait_status = wait_status_of(p.exit);
  p.zombie = true;
  const int32_t root_pid = root().pid;
  for (auto& c : procs_)
    if (c->ppid == p.pid && c.get() != &p) c->ppid = root_pid;
  Process* parent = find(p.ppid);
  if (!parent || parent->zombie) {
    p.ppid = 0;  // nobody waits for it: collect() drops it
    return;
  }
  const KernelSigaction& act = parent->sigactions[SIGCHLD];
  if (act.handler == kSigIgn || (act.flags & kSaNocldwait)) {
    p.ppid = 0;  // reaped at once, as Linux does when the parent ignores SIGCHLD
  } else {
    GuestSiginfo si;
    si.code = p.exit.by_signal ? CLD_KILLED : CLD_EXITED;
    si.set_u32(0, static_cast<uint32_t>(p.pid));
    si.set_u32(4, static_cast<uint32_t>(getuid()));
    si.set_u32(8, static_cast<uint32_t>(p.exit.code));
    parent->signals.raise(SIGCHLD, si);
  }
  // The parent's threads that wait for it (or, auto-reaped, for nothing left) go on.
  for (GuestThread& t : parent->threads.all()) {
    if (t.exited || t.wait.kind != ThreadWait::Kind::kChild || (t.wait.options & kVforkWait)) continue;
    bool any = false;
    const int i = find_ended(*parent, t.wait, &any);
    if (i > 0 || (i < 0 && !any)) {
      const ThreadWait w = t.wait;
      parent->threads.interrupt(t, i > 0 ? report(*parent, *procs_[i], w) : -ECHILD);
    }
  }
}

void ProcessTree::collect(const Process* keep) {
  std::erase_if(procs_, [&](const std::unique_ptr<Process>& p) {
    return p.get() != keep && p.get() != procs_.front().get() && p->zombie && p->ppid == 0;
  });
}

int ProcessTree::find_ended(const Process& parent, const ThreadWait& w, bool* any) const {
  *any = false;
  for (size_t i = 1; i < procs_.size(); ++i) {
    const Process& c = *procs_[i];
    if (c.zombie && c.ppid == 0) continue;
    if (!matches(parent, c, w.child)) continue;
    *any = true;
    if (c.zombie) return static_cast<int>(i);
  }
  return *any ? 0 : -1;
}

int64_t ProcessTree::report(Process& parent, Process& child, const ThreadWait& w) {
  const int32_t pid = child.pid;
  if (w.waitid) {
    if (w.out_va) {
      GuestSiginfo si;
      si.signo = SIGCHLD;
      si.code = child.exit.by_signal ? CLD_KILLED : CLD_EXITED;
      si.set_u32(0, static_cast<uint32_t>(pid));
      si.set_u32(4, static_cast<uint32_t>(getuid()));
      si.set_u32(8, static_cast<uint32_t>(child.exit.code));
      if (!parent.as->copy_out(w.out_va, &si, sizeof si)) return -EFAULT;
    }
  } else if (w.out_va && !parent.as->copy_out(w.out_va, &child.wait_status, 4)) {
    return -EFAULT;
  }
  if (w.rusage_va) {
    const rusage none{};
    if (!parent.as->copy_out(w.rusage_va, &none, sizeof none)) return -EFAULT;
  }
  if (!(w.waitid && (w.options & WNOWAIT))) child.ppid = 0;  // reaped: collect() drops it
  return w.waitid ? 0 : pid;
}

int64_t ProcessTree::wait(Process& parent, const ThreadWait& w) {
  bool any = false;
  const int i = find_ended(parent, w, &any);
  if (i > 0) return report(parent, *procs_[i], w);
  if (!any) return -ECHILD;
  if (w.options & WNOHANG) {
    if (w.waitid && w.out_va) {
      const GuestSiginfo none;
      if (!parent.as->copy_out(w.out_va, &none, sizeof none)) return -EFAULT;
    }
    return 0;
  }
  parent.threads.block(w);
  return kSwitchThread;
}

bool ProcessTree::others_runnable(const Process& p) const {
  for (const auto& q : procs_) {
    if (q->zombie) continue;
    const ThreadTable& tt = q->threads;
    for (size_t i = 0; i < tt.all().size(); ++i)
      if (tt.all()[i].runnable() && !(q.get() == &p && i == tt.current_index())) return true;
  }
  return false;
}

void ProcessTree::replace(std::vector<std::unique_ptr<Process>> procs, int32_t next_pid) {
  procs_ = std::move(procs);
  for (auto& p : procs_) p->tree = this;
  next_pid_ = next_pid;
}

}  // namespace vmha
