// Completion times of running jobs: an indexed binary min-heap with one entry
// per job, so a rate change moves the job's entry instead of leaving stale
// ones behind. Ties go to the lower job index (deterministic order).
#pragma once

#include <cstdint>
#include <vector>

namespace duet {

class CompletionQueue {
 public:
  explicit CompletionQueue(size_t jobs = 0) : pos_(jobs, kNone) {}
  void resize(size_t jobs) {
    pos_.assign(jobs, kNone);
    heap_.clear();
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  double top_time() const { return heap_[0].t; }
  uint32_t top_job() const { return heap_[0].job; }

  // Sets (or moves) job's completion time.
  void set(uint32_t job, double t) {
    uint32_t p = pos_[job];
    if (p == kNone) {
      p = static_cast<uint32_t>(heap_.size());
      heap_.push_back({t, job});
      pos_[job] = p;
      up(p);
      return;
    }
    double old = heap_[p].t;
    heap_[p].t = t;
    if (t < old)
      up(p);
    else
      down(p);
  }

  void remove(uint32_t job) {
    uint32_t p = pos_[job];
    if (p == kNone) return;
    pos_[job] = kNone;
    Entry last = heap_.back();
    heap_.pop_back();
    if (p == heap_.size()) return;
    heap_[p] = last;
    pos_[last.job] = p;
    up(p);
    down(pos_[last.job]);
  }

  void pop() { remove(heap_[0].job); }

 private:
  static constexpr uint32_t kNone = 0xffffffffu;
  struct Entry {
    double t;
    uint32_t job;
    bool before(const Entry& o) const { return t != o.t ? t < o.t : job < o.job; }
  };
  void place(uint32_t p, const Entry& e) {
    heap_[p] = e;
    pos_[e.job] = p;
  }
  void up(uint32_t p) {
    Entry e = heap_[p];
    while (p > 0) {
      uint32_t q = (p - 1) / 2;
      if (!e.before(heap_[q])) break;
      place(p, heap_[q]);
      p = q;
    }
    place(p, e);
  }
  void down(uint32_t p) {
    Entry e = heap_[p];
    const uint32_t n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t c = 2 * p + 1;
      if (c >= n) break;
      if (c + 1 < n && heap_[c + 1].before(heap_[c])) ++c;
      if (!heap_[c].before(e)) break;
      place(p, heap_[c]);
      p = c;
    }
    place(p, e);
  }
  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;
};

}  // namespace duet
