// futex: WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAIT_BITSET and
// WAKE_BITSET, private or shared (the guest is one process, so both key on
// the guest virtual address), with relative and absolute timeouts.
// A waiter is a record in the thread table (sys/threads.h), not a host
// thread blocked in a call: an epoch pause, a save and a restore leave it
// waiting, with no spurious EINTR or ETIMEDOUT; its deadline travels with the
// VM state as the time it has left. The PI operations are not implemented.
#include <linux/futex.h>
#include <sys/syscall.h>

#include <cerrno>
#include <algorithm>
#include <climits>
#include <string>

#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

constexpr int64_t kNs = 1000000000;

bool read_word(Process& p, uint64_t va, uint32_t* v) { return va % 4 == 0 && p.as->copy_in(v, va, 4); }

int64_t futex_wait(Process& p, const SyscallArgs& a, int op, bool realtime) {
  const uint64_t uaddr = a.a[0];
  const uint32_t bitset = op == FUTEX_WAIT_BITSET ? static_cast<uint32_t>(a.a[5]) : FUTEX_BITSET_MATCH_ANY;
  if (!bitset) return -EINVAL;
  if (uaddr % 4) return -EINVAL;
  ThreadWait w;
  w.kind = ThreadWait::Kind::kFutex;
  w.futex = uaddr;
  w.bitset = bitset;
  if (a.a[3]) {
    timespec t;
    if (!p.as->copy_in(&t, a.a[3], sizeof t)) return -EFAULT;
    if (t.tv_sec < 0 || t.tv_nsec < 0 || t.tv_nsec >= kNs) return -EINVAL;
    int64_t ns = t.tv_sec > INT64_MAX / kNs - 1 ? INT64_MAX / 2 : t.tv_sec * kNs + t.tv_nsec;
    w.timed = true;
    if (op == FUTEX_WAIT) {  // relative, measured on CLOCK_MONOTONIC
      w.clock = CLOCK_MONOTONIC;
      w.deadline_ns = thread_clock_ns(CLOCK_MONOTONIC) + ns;
    } else {
      w.clock = realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC;
      w.deadline_ns = ns;
    }
  }
  uint32_t v;
  if (!read_word(p, uaddr, &v)) return -EFAULT;
  if (v != static_cast<uint32_t>(a.a[2])) return -EAGAIN;
  if (w.timed && thread_clock_ns(w.clock) >= w.deadline_ns) return -ETIMEDOUT;
  p.threads.block(w);
  return kSwitchThread;
}

int clamp_count(uint64_t v) { return static_cast<int>(std::min<uint64_t>(static_cast<uint32_t>(v), INT_MAX)); }

int64_t futex_requeue(Process& p, const SyscallArgs& a, bool compare) {
  const int wake = clamp_count(a.a[2]), move = clamp_count(a.a[3]);
  if (static_cast<int32_t>(a.a[2]) < 0 || static_cast<int32_t>(a.a[3]) < 0) return -EINVAL;
  if (compare) {
    uint32_t v;
    if (!read_word(p, a.a[0], &v)) return -EFAULT;
    if (v != static_cast<uint32_t>(a.a[5])) return -EAGAIN;
  }
  int n = p.threads.wake(a.a[0], FUTEX_BITSET_MATCH_ANY, wake);
  return n + p.threads.requeue(a.a[0], a.a[4], move);
}

// FUTEX_WAKE_OP: *uaddr2 = *uaddr2 OP oparg; wake on uaddr; and on uaddr2 if
// the old value compares true.
int64_t futex_wake_op(Process& p, const SyscallArgs& a) {
  const uint32_t enc = static_cast<uint32_t>(a.a[5]);
  const int op = (enc >> 28) & 7, cmp = (enc >> 24) & 15;
  int32_t oparg = static_cast<int32_t>(enc << 8) >> 20, cmparg = static_cast<int32_t>(enc << 20) >> 20;
  if ((enc >> 28) & 8) {
    if (oparg < 0 || oparg > 31) return -EINVAL;
    oparg = 1 << oparg;
  }
  uint32_t old;
  if (!read_word(p, a.a[4], &old)) return -EFAULT;
  uint32_t nv;
  switch (op) {
    case FUTEX_OP_SET: nv = static_cast<uint32_t>(oparg); break;
    case FUTEX_OP_ADD: nv = old + static_cast<uint32_t>(oparg); break;
    case FUTEX_OP_OR: nv = old | static_cast<uint32_t>(oparg); break;
    case FUTEX_OP_ANDN: nv = old & ~static_cast<uint32_t>(oparg); break;
    case FUTEX_OP_XOR: nv = old ^ static_cast<uint32_t>(oparg); break;
    default: return -ENOSYS;
  }
  const int32_t o = static_cast<int32_t>(old);
  bool hit;
  switch (cmp) {
    case FUTEX_OP_CMP_EQ: hit = o == cmparg; break;
    case FUTEX_OP_CMP_NE: hit = o != cmparg; break;
    case FUTEX_OP_CMP_LT: hit = o < cmparg; break;
    case FUTEX_OP_CMP_LE: hit = o <= cmparg; break;
    case FUTEX_OP_CMP_GT: hit = o > cmparg; break;
    case FUTEX_OP_CMP_GE: hit = o >= cmparg; break;
    default: return -ENOSYS;
  }
  if (!p.as->copy_out(a.a[4], &nv, 4)) return -EFAULT;
  // As Linux, a count of 0 wakes one.
  int n = p.threads.wake(a.a[0], FUTEX_BITSET_MATCH_ANY, std::max(clamp_count(a.a[2]), 1));
  if (hit) n += p.threads.wake(a.a[4], FUTEX_BITSET_MATCH_ANY, std::max(clamp_count(a.a[3]), 1));
  return n;
}

int64_t sys_futex(Process& p, const SyscallArgs& a) {
  const int cmd = static_cast<int>(a.a[1]);
  const int op = cmd & FUTEX_CMD_MASK;
  const bool realtime = cmd & FUTEX_CLOCK_REALTIME;
  if (realtime && op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET) return -ENOSYS;
  switch (op) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
      return futex_wait(p, a, op, realtime);
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET: {
      const uint32_t bitset = op == FUTEX_WAKE_BITSET ? static_cast<uint32_t>(a.a[5]) : FUTEX_BITSET_MATCH_ANY;
      if (!bitset) return -EINVAL;
      return p.threads.wake(a.a[0], bitset, std::max(clamp_count(a.a[2]), 1));  // as Linux: 0 wakes one
    }
    case FUTEX_REQUEUE:
      return futex_requeue(p, a, false);
    case FUTEX_CMP_REQUEUE:
      return futex_requeue(p, a, true);
    case FUTEX_WAKE_OP:
      return futex_wake_op(p, a);
    default:
      p.log_once(5000 + static_cast<uint64_t>(op),
                 "futex operation " + std::to_string(op) + " is not supported (PI futexes): returning ENOSYS");
      return -ENOSYS;
  }
}

const SyscallDef kDefs[] = {
    {SYS_futex, "futex", sys_futex},
};

}  // namespace

std::span<const SyscallDef> futex_syscalls() { return kDefs; }

}  // namespace vmha
