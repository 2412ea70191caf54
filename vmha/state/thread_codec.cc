// The thread section of the VM state (version 3): every guest thread with its
// id, the word cleared at its exit, what it waits for (a futex word and
// bitset, a sleep, signals) with the time its wait has left, the answer a woken one
// gets, and, for each thread not on the vCPU, its registers and FPU state
// (the thread on the vCPU is the vCPU section; its mask and FS base are the
// process section's). A wait's deadline travels as the time it had left, as
// the signal section's timers do: a restored VM waits on from then, on its
// own host's clocks.
#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

constexpr char kThreadsMagic[8] = {'V', 'M', 'H', 'A', 'T', 'H', 'R', 'D'};

bool known_clock(int32_t c) { return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC || c == CLOCK_BOOTTIME; }

}  // namespace

bool VmStateCodec::has_threads(const Vm& vm) { return vm.proc_->threads.active(); }

void VmStateCodec::encode_threads(ByteWriter& w, const Vm& vm, bool tree) {
  const ThreadTable& tt = vm.proc_->threads;
  w.bytes(kThreadsMagic, 8);
  w.u32(static_cast<uint32_t>(tt.all().size()));
  w.u32(static_cast<uint32_t>(tt.current_index()));
  w.u32(static_cast<uint32_t>(tt.next_tid()));
  w.u64(tt.wait_seq());
  for (size_t i = 0; i < tt.all().size(); ++i) {
    const GuestThread& t = tt.all()[i];
    w.u32(static_cast<uint32_t>(t.tid));
    w.u64(t.clear_child_tid);
    w.u64(t.sigmask);
    w.u64(t.fs_base);
    w.u32(static_cast<uint32_t>(t.in_call) | (static_cast<uint32_t>(t.exited) << 1));
    w.u64(static_cast<uint64_t>(t.result));
    const ThreadWait& wt = t.wait;
    w.u32(static_cast<uint32_t>(wt.kind));
    w.u64(wt.futex);
    w.u32(wt.bitset);
    w.u64(wt.sigset);
    w.u32(wt.timed);
    w.u32(static_cast<uint32_t>(wt.clock));
    int64_t left = wt.timed ? std::max<int64_t>(0, wt.deadline_ns - thread_clock_ns(wt.clock)) : 0;
    w.u64(static_cast<uint64_t>(left));
    w.u64(wt.seq);
    if (tree) {
      // Version 4: what a wait for a child needs, and whether the registers
      // follow (every thread's but the one on the vCPU).
      w.u64(static_cast<uint64_t>(wt.child));
      w.u64(wt.out_va);
      w.u64(wt.rusage_va);
      w.u32(wt.options);
      w.u32(wt.waitid);
      const bool has = !t.exited && vm.thread_cpus_.count({vm.proc_->pid, t.tid});
      w.u32(has);
      if (!has) continue;
    } else if (i == tt.current_index() || t.exited) {
      continue;  // on the vCPU, or gone
    }
    const Vm::ThreadCpu& c = vm.thread_cpus_.at({vm.proc_->pid, t.tid});
    w.pod(c.regs);
    w.u32(!c.xsave.empty());
    if (!c.xsave.empty())
      w.bytes(c.xsave.data(), c.xsave.size());
    else
      w.pod(c.fpu);
  }
}

void VmStateCodec::decode_threads(ByteReader& r, Vm& vm, bool tree) {
  char magic[8];
  if (r.bytes(magic, 8, "thread section") && std::memcmp(magic, kThreadsMagic, 8) != 0)
    r.fail("thread section", "VMHATHRD");
  const uint32_t n = r.u32("thread count"), current = r.u32("current thread");
  const auto next_tid = static_cast<int32_t>(r.u32("next thread id"));
  const uint64_t seq = r.u64("wait sequence");
  if (r.ok() && (n < 1 || n > kMaxThreads)) r.fail("thread count", "1..1024");
  if (r.ok() && current >= n) r.fail("current thread", "an index below the thread count");
  if (r.ok() && next_tid < kFirstThreadId) r.fail("next thread id", "4194304 or more");
  std::vector<GuestThread> threads;
  std::map<Vm::ThreadKey, Vm::ThreadCpu> cpus;
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    GuestThread t;
    t.tid = static_cast<int32_t>(r.u32("thread id"));
    t.clear_child_tid = r.u64("clear-child-tid address");
    t.sigmask = r.u64("thread signal mask");
    t.fs_base = r.u64("thread FS base");
    const uint32_t flags = r.u32("thread flags");
    t.result = static_cast<int64_t>(r.u64("thread result"));
    ThreadWait& wt = t.wait;
    const uint32_t kind = r.u32("wait kind");
    wt.futex = r.u64("futex address");
    wt.bitset = r.u32("futex bitset");
    wt.sigset = r.u64("signal wait set");
    const uint32_t timed = r.u32("wait timed");
    wt.clock = static_cast<int32_t>(r.u32("wait clock"));
    const auto left = static_cast<int64_t>(r.u64("wait deadline"));
    wt.seq = r.u64("wait order");
    bool has_regs = false;
    if (tree) {
      wt.child = static_cast<int64_t>(r.u64("child wait selector"));
      wt.out_va = r.u64("child wait answer address");
      wt.rusage_va = r.u64("child wait rusage address");
      wt.options = r.u32("child wait options");
      const uint32_t waitid = r.u32("child wait call");
      const uint32_t has = r.u32("thread registers flag");
      if (r.ok() && (waitid > 1 || has > 1)) r.fail("child wait call and registers flag", "0 or 1");
      wt.waitid = waitid;
      has_regs = has;
    }
    if (!r.ok()) break;
    t.in_call = flags & 1;
    t.exited = flags & 2;
    wt.kind = static_cast<ThreadWait::Kind>(kind);
    wt.timed = timed;
    if (flags > 3)
      r.fail("thread flags", "0..3");
    else if (t.tid != 0 && (t.tid < kFirstThreadId || t.tid >= next_tid))
      r.fail("thread id", "0 or an id this VM gave out");
    else if (kind > (tree ? 4u : 3u) || timed > 1)
      r.fail("wait kind", tree ? "none, futex, sleep, signal or child" : "none, futex, sleep or signal");
    else if (timed && (!known_clock(wt.clock) || left < 0))
      r.fail("wait clock", "CLOCK_REALTIME, CLOCK_MONOTONIC or CLOCK_BOOTTIME and a time left of 0 or more");
    else if (kind == 1 && wt.futex % 4)
      r.fail("futex address", "a 4-byte aligned address");
    if (!r.ok()) break;
    for (const GuestThread& o : threads)
      if (o.tid == t.tid) r.fail("thread id", "an id no other thread has");
    if (timed) wt.deadline_ns = thread_clock_ns(wt.clock) + left;
    if ((tree ? has_regs : i != current && !t.exited) && r.ok()) {
      Vm::ThreadCpu c;
      r.pod(&c.regs, "thread registers");
      const uint32_t has_xsave = r.u32("thread XSAVE flag");
      if (r.ok() && has_xsave > 1) r.fail("thread XSAVE flag", "0 or 1");
      if (has_xsave) {
        c.xsave.resize(4096);
        r.bytes(c.xsave.data(), c.xsave.size(), "thread XSAVE image");
      } else {
        r.pod(&c.fpu, "thread FPU registers");
      }
      cpus[{vm.proc_->pid, t.tid}] = std::move(c);
    }
    threads.push_back(t);
  }
  if (!r.ok()) return;
  vm.proc_->threads.replace(std::move(threads), current, next_tid, seq);
  vm.thread_cpus_.merge(cpus);
}

}  // namespace vmha
