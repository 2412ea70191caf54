// Decision points in time order. At equal times: completions (trace order),
// arrivals, timers (fluctuation step, decision period, the ordering's own
// next decision point), one scheduling pass.
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/sim/sim_internal.h"

namespace duet::sim {

EventLoop::EventLoop(SimState& s, Scheduler& scheduler) : s_(s), scheduler_(scheduler) {
  if (!s_.cluster.perf().ideal() && s_.opt.model.fluctuation_period_s > 0)
    next_fluct_ = s_.opt.model.fluctuation_period_s;
}

double EventLoop::next_event_time() {
  const JobQueues& q = s_.q;
  double t = q.completions.empty() ? kInf : q.completions.top_time();
  while (next_arrival_ < s_.jobs.size() && s_.jobs[next_arrival_].st == JobState::Dropped) ++next_arrival_;
  if (next_arrival_ < s_.jobs.size()) t = std::min(t, s_.jobs[next_arrival_].spec->submit);
  if (t < kInf || !q.running.empty() || !q.pending.empty()) t = std::min(t, next_fluct_);
  if (!q.running.empty() || !q.pending.empty()) t = std::min({t, std::max(next_period_, s_.now), next_wake_});
  return t;
}

void EventLoop::complete_due(double t) {
  while (!s_.q.completions.empty() && s_.q.completions.top_time() == t) {
    s_.complete(s_.q.completions.top_job());  // removes it from the queue
    ++s_.acct.events;
  }
}

void EventLoop::admit_arrivals(double t) {
  std::vector<SimJob>& jobs = s_.jobs;
  while (next_arrival_ < jobs.size() &&
         (jobs[next_arrival_].st == JobState::Dropped || jobs[next_arrival_].spec->submit == t)) {
    if (jobs[next_arrival_].st != JobState::Dropped) {
      jobs[next_arrival_].st = JobState::Pending;
      s_.q.pending.push_back(static_cast<uint32_t>(next_arrival_));
      scheduler_.arrived(static_cast<uint32_t>(next_arrival_));
      ++s_.acct.events;
    }
    ++next_arrival_;
  }
}

// The fluctuation step and the decision period; true if the period fired.
bool EventLoop::fire_timers(double t) {
  if (next_fluct_ <= t) {
    s_.cluster.perf().advance_fluctuation();
    for (uint32_t i : s_.q.running) s_.dirty.mark(i);
    next_fluct_ = later(next_fluct_, s_.opt.model.fluctuation_period_s, "fluctuation");
    ++s_.acct.events;
  }
  const bool woke = next_wake_ <= t;
  if (woke) next_wake_ = kInf, ++s_.acct.events;
  if (!s_.pol.periodic()) return woke;
  const bool fired = next_period_ <= t;
  if (fired) ++s_.acct.events;
  if (fired || next_period_ == kInf) next_period_ = later(t, s_.opt.period_s, "decision period");
  return fired || woke;
}

// An idle cluster, nothing left to arrive, jobs waiting: the policy will
// not start them (periodic policies get kIdlePasses more chances).
void EventLoop::check_not_stuck() {
  if (s_.q.running.empty() && !s_.q.pending.empty() && next_arrival_ >= s_.jobs.size()) {
    if (!s_.pol.periodic() || ++idle_passes_ > kIdlePasses)
      throw std::runtime_error(fmt::format(
          "{} job(s) can never start: the policy placed none of them on the idle cluster", s_.q.pending.size()));
  } else {
    idle_passes_ = 0;
  }
}

bool EventLoop::step() {
  const int64_t n = static_cast<int64_t>(s_.jobs.size());
  if (s_.done == n) return false;
  const double t = next_event_time();
  if (t == kInf) throw std::logic_error("simulator stalled with jobs left");
  s_.acct.sample_until(t, s_.cluster.busy(), static_cast<int>(s_.q.pending.size()),
                       static_cast<int>(s_.q.running.size()));
  s_.now = t;
  complete_due(t);
  admit_arrivals(t);
  const bool timer = fire_timers(t);
  scheduler_.pass(timer);
  if (s_.pol.ordering) {  // the policy's own next decision point, if later than now
    const double w = s_.pol.ordering->next_decision_s();
    next_wake_ = w > t ? w : kInf;
  }
  s_.recompute_rates();
  check_not_stuck();
  if (s_.opt.progress && (++steps_ & 0x3fff) == 0)
    s_.opt.progress(static_cast<double>(s_.done) / std::max<size_t>(1, s_.jobs.size()));
  return s_.done < n;
}

}  // namespace duet::sim
