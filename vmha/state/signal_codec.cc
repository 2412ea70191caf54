// The signal section of the VM state (version 2): what version 1 lacks of a
// process's signal state — pending signals with their siginfo, the alternate
// stack, rt_sigsuspend's saved mask and the timers. Dispositions and the mask
// stay in the process section. A timer travels as the time it had left when
// the state was saved: a restored VM (a backup's takeover, --restore) runs
// it on from then, on its own host's clocks.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cstring>

#include "vmha/state/vm_state_codec.h"

namespace vmha {

namespace {

constexpr char kSignalsMagic[8] = {'V', 'M', 'H', 'A', 'S', 'I', 'G', 'S'};

bool known_clock(int32_t c) { return c == CLOCK_REALTIME || c == CLOCK_MONOTONIC || c == CLOCK_BOOTTIME; }

}  // namespace

bool VmStateCodec::has_signals(const Vm& vm) { return vm.proc_->signals.active(); }

void VmStateCodec::encode_signals(ByteWriter& w, const Vm& vm) {
  const SignalState& s = vm.proc_->signals;
  w.bytes(kSignalsMagic, 8);
  w.u64(s.pending);
  for (int sig = 1; sig <= kMaxSignal; ++sig)
    if (s.pending & sigbit(sig)) w.bytes(&s.info[sig], sizeof s.info[sig]);
  w.u64(s.altstack.sp);
  w.u32(static_cast<uint32_t>(s.altstack.flags));
  w.u64(s.altstack.size);
  w.u32(s.saved_mask.has_value());
  w.u64(s.saved_mask.value_or(0));
  uint32_t used = 0;
  for (const GuestTimer& t : s.timers) used += t.used;
  w.u32(used);
  for (int slot = 0; slot <= kMaxTimers; ++slot) {
    const GuestTimer& t = s.timers[slot];
    if (!t.used) continue;
    int64_t left = t.deadline_ns ? std::max<int64_t>(1, t.deadline_ns - SignalState::now_ns(t.clock)) : 0;
    w.u32(static_cast<uint32_t>(slot));
    w.u32(static_cast<uint32_t>(t.clock));
    w.u32(static_cast<uint32_t>(t.signo));
    w.u32(t.notify);
    w.u64(t.value);
    w.u64(static_cast<uint64_t>(left));
    w.u64(static_cast<uint64_t>(t.interval_ns));
    w.u32(t.overrun);
    w.u32(t.last_overrun);
  }
}

void VmStateCodec::decode_signals(ByteReader& r, Vm& vm) {
  SignalState& s = vm.proc_->signals;
  char magic[8];
  if (r.bytes(magic, 8, "signal section") && std::memcmp(magic, kSignalsMagic, 8) != 0)
    r.fail("signal section", "VMHASIGS");
  s.pending = r.u64("pending signals");
  for (int sig = 1; sig <= kMaxSignal && r.ok(); ++sig) {
    if (!(s.pending & sigbit(sig))) continue;
    r.bytes(&s.info[sig], sizeof s.info[sig], "siginfo");
    if (r.ok() && s.info[sig].signo != sig) r.fail("siginfo", "the number of its pending signal");
  }
  s.altstack.sp = r.u64("alternate stack");
  s.altstack.flags = static_cast<int32_t>(r.u32("alternate stack flags"));
  s.altstack.size = r.u64("alternate stack size");
  if (r.ok() && s.altstack.flags != 0 && s.altstack.flags != SS_DISABLE)
    r.fail("alternate stack flags", "0 or SS_DISABLE");
  uint32_t has_saved = r.u32("saved mask flag");
  uint64_t saved = r.u64("saved mask");
  if (r.ok() && has_saved > 1) r.fail("saved mask flag", "0 or 1");
  if (has_saved) s.saved_mask = saved;
  uint32_t n = r.u32("timer count");
  if (r.ok() && n > kMaxTimers + 1) r.fail("timer count", "at most 33");
  for (uint32_t i = 0; i < n && r.ok(); ++i) {
    uint32_t slot = r.u32("timer slot");
    GuestTimer t;
    t.used = true;
    t.clock = static_cast<int32_t>(r.u32("timer clock"));
    t.signo = static_cast<int32_t>(r.u32("timer signal"));
    uint32_t notify = r.u32("timer notification");
    t.notify = notify == 1;
    t.value = r.u64("timer value");
    auto left = static_cast<int64_t>(r.u64("timer deadline"));
    t.interval_ns = static_cast<int64_t>(r.u64("timer interval"));
    t.overrun = r.u32("timer overrun");
    t.last_overrun = r.u32("timer overrun");
    if (!r.ok()) break;
    if (slot > static_cast<uint32_t>(kMaxTimers) || s.timers[slot].used)
      r.fail("timer slot", "a free slot 0..32");
    else if (!known_clock(t.clock))
      r.fail("timer clock", "CLOCK_REALTIME, CLOCK_MONOTONIC or CLOCK_BOOTTIME");
    else if (t.signo < 1 || t.signo > kMaxSignal || notify > 1)
      r.fail("timer signal", "a signal 1..64");
    else if (left < 0 || t.interval_ns < 0)
      r.fail("timer deadline", "a time left of 0 or more");
    if (!r.ok()) break;
    t.deadline_ns = left ? SignalState::now_ns(t.clock) + left : 0;
    s.timers[slot] = t;
  }
  s.timers_changed = true;
}

}  // namespace vmha
