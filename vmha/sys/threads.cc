#include "vmha/sys/threads.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "vmha/sys/signal_state.h"

namespace vmha {

int64_t thread_clock_ns(int clock) { return SignalState::now_ns(clock); }

size_t ThreadTable::live() const {
  return static_cast<size_t>(std::count_if(threads_.begin(), threads_.end(), [](const GuestThread& t) { return !t.exited; }));
}

bool ThreadTable::active() const {
  const GuestThread& t = threads_[current_];
  return threads_.size() > 1 || t.in_call || t.wait.kind != ThreadWait::Kind::kNone || next_tid_ != kFirstThreadId;
}

GuestThread* ThreadTable::find(int32_t tid) {
  for (GuestThread& t : threads_)
    if (!t.exited && guest_id(t) == tid) return &t;
  return nullptr;
}

int32_t ThreadTable::guest_id(const GuestThread& t) const { return t.tid ? t.tid : pid_ ? pid_ : static_cast<int32_t>(getpid()); }

GuestThread* ThreadTable::add(int32_t* tid) {
  if (live() >= kMaxThreads || next_tid_ == INT32_MAX) return nullptr;
  GuestThread t;
  t.tid = next_tid_++;
  threads_.push_back(t);
  *tid = t.tid;
  return &threads_.back();
}

void ThreadTable::block(ThreadWait w) {
  w.seq = ++seq_;
  GuestThread& t = current();
  t.wait = w;
  t.in_call = true;
}

namespace {

// Waiters on `futex`, oldest first.
std::vector<GuestThread*> waiters(std::vector<GuestThread>& threads, uint64_t futex) {
  std::vector<GuestThread*> w;
  for (GuestThread& t : threads)
    if (!t.exited && t.wait.kind == ThreadWait::Kind::kFutex && t.wait.futex == futex) w.push_back(&t);
  std::sort(w.begin(), w.end(), [](const GuestThread* a, const GuestThread* b) { return a->wait.seq < b->wait.seq; });
  return w;
}

}  // namespace

int ThreadTable::wake(uint64_t futex, uint32_t bitset, int n) {
  int woken = 0;
  for (GuestThread* t : waiters(threads_, futex)) {
    if (woken >= n) break;
    if (!(t->wait.bitset & bitset)) continue;
    interrupt(*t, 0);
    ++woken;
  }
  return woken;
}

int ThreadTable::requeue(uint64_t from, uint64_t to, int n) {
  int moved = 0;
  for (GuestThread* t : waiters(threads_, from)) {
    if (moved >= n) break;
    t->wait.futex = to;
    ++moved;
  }
  return moved;
}

void ThreadTable::interrupt(GuestThread& t, int64_t result) {
  t.wait = ThreadWait{};
  t.result = result;
}

bool ThreadTable::expire(int64_t now_mono, int64_t now_real, int64_t now_boot) {
  bool any = false;
  for (GuestThread& t : threads_) {
    if (t.exited || t.wait.kind == ThreadWait::Kind::kNone || !t.wait.timed) continue;
    int64_t now = t.wait.clock == CLOCK_REALTIME ? now_real : t.wait.clock == CLOCK_BOOTTIME ? now_boot : now_mono;
    if (now < t.wait.deadline_ns) continue;
    const ThreadWait::Kind kind = t.wait.kind;
    interrupt(t, kind == ThreadWait::Kind::kFutex ? -ETIMEDOUT : kind == ThreadWait::Kind::kSignal ? -EAGAIN : 0);
    any = true;
  }
  return any;
}

int64_t ThreadTable::next_due_ns() const {
  int64_t best = -1;
  for (const GuestThread& t : threads_) {
    if (t.exited || t.wait.kind == ThreadWait::Kind::kNone || !t.wait.timed) continue;
    int64_t left = std::max<int64_t>(0, t.wait.deadline_ns - thread_clock_ns(t.wait.clock));
    if (best < 0 || left < best) best = left;
  }
  return best;
}

std::optional<size_t> ThreadTable::pick() const {
  const size_t n = threads_.size();
  for (size_t k = 1; k <= n; ++k) {
    size_t i = (current_ + k) % n;
    if (threads_[i].runnable()) return i;
  }
  return std::nullopt;
}

void ThreadTable::reap() {
  const GuestThread* cur = &threads_[current_];
  std::vector<GuestThread> kept;
  size_t cur_index = 0;
  for (const GuestThread& t : threads_) {
    if (t.exited && &t != cur) continue;
    if (&t == cur) cur_index = kept.size();
    kept.push_back(t);
  }
  threads_ = std::move(kept);
  current_ = cur_index;
}

void ThreadTable::replace(std::vector<GuestThread> threads, size_t current, int32_t next_tid, uint64_t seq) {
  threads_ = std::move(threads);
  current_ = current;
  next_tid_ = next_tid;
  seq_ = seq;
}

}  // namespace vmha
