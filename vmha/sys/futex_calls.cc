// futex: WAIT, WAKE, REQUEUE, CMP_REQUEUE, WAKE_OP, WAIT_BITSET and
// WAKE_BITSET, private or shared, with relative and absolute timeouts. A
// private operation keys on the guest virtual address (the threads of one
// process); a shared one on the guest physical address (kSharedKey), and
// wakes waiters in every process of the tree: the semaphores of Python's
// multiprocessing live in MAP_SHARED memory that a fork passed on, so the
// parent and its workers reach one frame at their own addresses.
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

#include "vmha/sys/process_tree.h"
#include "vmha/sys/syscall_table.h"

namespace vmha {

namespace {

constexpr int64_t kNs = 1000000000;

bool read_word(Process& p, uint64_t va, uint32_t* v) { return va % 4 == 0 && p.as->copy_in(v, va, 4); }

constexpr uint64_t kSharedKey = 1ull << 62;  // guest virtual addresses are below 2^47

// The key of the futex word at va (readable: callers read it first or the
// wait fails with EFAULT): 0 when it is not mapped.
uint64_t futex_key(Process& p, uint64_t va, int cmd) {
  if (cmd & FUTEX_PRIVATE_FLAG) return va;
  const uint64_t gpa = p.as->page_table().translate(va, false);
  return gpa == ~0ull ? 0 : kSharedKey | gpa;
}

// The processes whose waiters a key reaches.
template <typename Fn>
int each_process(Process& p, uint64_t key, Fn fn) {
  if (!(key & kSharedKey) || !p.tree) return fn(p);
  int n = 0;
  for (const auto& q : p.tree->all())
    if (!q->zombie) n += fn(*q);
  return n;
}

int wake(Process& p, uint64_t key, uint32_t bitset, int n) {
  return each_process(p, key, [&](Process& q) {
    const int woken = n > 0 ? q.threads.wake(key, bitset, n) : 0;
    n -= woken;
    return woken;
  });
}

int requeue(Process& p, uint64_t from, uint64_t to, int n) {
  return each_process(p, from, [&](Process& q) {
    const int moved = n > 0 ? q.threads.requeue(from, to, n) : 0;
    n -= moved;
    return moved;
  });
}

int64_t futex_wait(Process& p, const SyscallArgs& a, int op, bool realtime) {
  const uint64_t uaddr = a.a[0];
  const int cmd = static_cast<int>(a.a[1]);
  const uint32_t bitset = op == FUTEX_WAIT_BITSET ? static_cast<uint32_t>(a.a[5]) : FUTEX_BITSET_MATCH_ANY;
  if (!bitset) return -EINVAL;
  if (uaddr % 4) return -EINVAL;
  ThreadWait w;
  w.kind = ThreadWait::Kind::kFutex;
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
  w.futex = futex_key(p, uaddr, cmd);
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
  const int cmd = static_cast<int>(a.a[1]);
  const uint64_t from = futex_key(p, a.a[0], cmd), to = futex_key(p, a.a[4], cmd);
  if (!from || !to) return -EFAULT;
  int n = vmha::wake(p, from, FUTEX_BITSET_MATCH_ANY, wake);
  return n + requeue(p, from, to, move);
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
  const int cmd = static_cast<int>(a.a[1]);
  const uint64_t key1 = futex_key(p, a.a[0], cmd), key2 = futex_key(p, a.a[4], cmd);
  int n = key1 ? wake(p, key1, FUTEX_BITSET_MATCH_ANY, std::max(clamp_count(a.a[2]), 1)) : 0;
  if (hit) n += wake(p, key2, FUTEX_BITSET_MATCH_ANY, std::max(clamp_count(a.a[3]), 1));
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
      const uint64_t key = futex_key(p, a.a[0], cmd);
      if (!key) return -EFAULT;
      return wake(p, key, bitset, std::max(clamp_count(a.a[2]), 1));  // as Linux: 0 wakes one
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

int futex_wake_any(Process& p, uint64_t va, int n) {
  int woken = wake(p, va, FUTEX_BITSET_MATCH_ANY, n);
  const uint64_t key = futex_key(p, va, 0);
  if (woken < n && key) woken += wake(p, key, FUTEX_BITSET_MATCH_ANY, n - woken);
  return woken;
}

std::span<const SyscallDef> futex_syscalls() { return kDefs; }

}  // namespace vmha
