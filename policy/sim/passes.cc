// The scheduling passes at a decision point: which jobs the policies are asked
// about, in what order, and what is started or preempted (simulator.h tells
// the rules).
#include <algorithm>
#include <stdexcept>

#include "policy/sim/sim_internal.h"

namespace duet::sim {

void Scheduler::pass(bool timer) {
  if (!s_.q.pending.empty()) {
    schedule(timer);
    return;
  }
  arrivals_.clear();
  s_.freed = false;
  stalled_ = false;
}

void Scheduler::schedule(bool timer) {
  const Policies& pol = s_.pol;
  if (pol.joint) {
    if (s_.freed || timer || !arrivals_.empty()) joint_pass();
  } else if (pol.ordering->preemptive()) {
    if (s_.freed || timer || !arrivals_.empty()) preemptive_pass();
  } else if (s_.freed || !stalled_) {
    if (pol.ordering->arrival_order())
      fifo_pass();
    else
      ranked_pass(std::vector<uint32_t>(s_.q.pending.begin(), s_.q.pending.end()));
  } else if (!arrivals_.empty() && !pol.ordering->blocking()) {
    // Nothing was freed since the last full pass left every older job
    // unplaceable, so only the new arrivals can start.
    ranked_pass(arrivals_);
  }
  s_.freed = false;
  stalled_ = !s_.q.pending.empty();  // every pending job was tried (or is blocked)
  arrivals_.clear();
}

// Tries to start job i; true if started.
bool Scheduler::try_start(uint32_t i, const ClusterView& cv, const JobView& v) {
  const SimJob& j = s_.jobs[i];
  if (s_.cluster.usable_free(j.mask) < j.gpus) return false;
  PlacementPolicy* placement = s_.pol.placement;
  std::optional<Placement> p = placement->place(v, cv);
  if (!p) return false;
  s_.cluster.check_placement(j, *p, placement->name());
  s_.start(i, std::move(*p));
  return true;
}

void Scheduler::build_views(const std::vector<uint32_t>& ids) {
  views_.clear();
  view_job_ = ids;
  for (uint32_t i : ids) views_.push_back(s_.view(i));
  order_.clear();
}

void Scheduler::remove_started() {
  std::deque<uint32_t> rest;
  for (uint32_t i : s_.q.pending)
    if (s_.jobs[i].st == JobState::Pending) rest.push_back(i);
  s_.q.pending.swap(rest);
}

// Ranks `ids` and starts jobs in that order. A non-blocking pass offers only
// the jobs that fit in the free GPUs they may use (the others could not
// start anyway, free GPUs only shrink during a pass) and asks for a ranked
// prefix of at most free_total jobs (each start takes a GPU); if GPUs are
// left when the prefix is used up, the rest is ranked again.
void Scheduler::ranked_pass(std::vector<uint32_t> ids) {
  const bool blocking = s_.pol.ordering->blocking();
  bool any = false;
  for (;;) {
    if (!blocking)
      std::erase_if(ids, [&](uint32_t i) {
        const SimJob& j = s_.jobs[i];
        return j.st != JobState::Pending || s_.cluster.usable_free(j.mask) < j.gpus;
      });
    if (ids.empty() || s_.cluster.free_total() == 0) break;
    bool stopped = false;
    start_ranked(ids, blocking, any, stopped);
    // Done unless the policy ranked a prefix only and GPUs are left.
    if (blocking || stopped || order_.size() >= ids.size() || s_.cluster.free_total() == 0) break;
    std::vector<char> ranked(ids.size(), 0);
    for (size_t k : order_)
      if (k < ranked.size()) ranked[k] = 1;
    std::vector<uint32_t> rest;
    for (size_t k = 0; k < ids.size(); ++k)
      if (!ranked[k]) rest.push_back(ids[k]);
    ids.swap(rest);
  }
  if (any) remove_started();
}

// One round of ranked_pass: rank `ids`, start in that order; a blocking
// policy stops at the first job that cannot start.
void Scheduler::start_ranked(const std::vector<uint32_t>& ids, bool blocking, bool& any, bool& stopped) {
  OrderingPolicy* ordering = s_.pol.ordering;
  build_views(ids);
  ClusterView cv = s_.cluster.view(s_.now);
  cv.rank_limit = blocking ? 0 : static_cast<size_t>(s_.cluster.free_total());
  ordering->rank(views_, cv, order_);
  for (size_t k : order_) {
    if (k >= view_job_.size())
      throw std::logic_error("ordering " + ordering->name() + " ranked a job index out of range");
    if (s_.cluster.free_total() == 0) break;
    uint32_t i = view_job_[k];
    if (s_.jobs[i].st != JobState::Pending) continue;
    cv.free_gpus = s_.cluster.free_total();
    if (try_start(i, cv, views_[k])) {
      any = true;
    } else if (blocking) {
      stopped = true;
      break;
    }
  }
}

void Scheduler::fifo_pass() {
  const bool blocking = s_.pol.ordering->blocking();
  std::deque<uint32_t>& pending = s_.q.pending;
  ClusterView cv = s_.cluster.view(s_.now);
  bool any = false;
  for (size_t k = 0; k < pending.size() && s_.cluster.free_total() > 0; ++k) {
    uint32_t i = pending[k];
    cv.free_gpus = s_.cluster.free_total();
    if (try_start(i, cv, s_.view(i)))
      any = true;
    else if (blocking)
      break;
  }
  if (!any) return;
  while (!pending.empty() && s_.jobs[pending.front()].st != JobState::Pending) pending.pop_front();
  if (!blocking) remove_started();
}

// Running and pending jobs ranked together: the ranked prefix that fits the
// cluster's GPUs is kept (1 per entry of `ids`).
std::vector<char> Scheduler::keep_ranked_prefix(const std::vector<uint32_t>& ids) {
  OrderingPolicy* ordering = s_.pol.ordering;
  build_views(ids);
  ordering->rank(views_, s_.cluster.view(s_.now), order_);
  std::vector<char> keep(ids.size(), 0);
  int budget = s_.cluster.total_gpus();
  for (size_t k : order_) {
    if (k >= ids.size()) throw std::logic_error("ordering " + ordering->name() + " ranked a job index out of range");
    if (s_.jobs[ids[k]].gpus <= budget) keep[k] = 1, budget -= s_.jobs[ids[k]].gpus;
  }
  return keep;
}

void Scheduler::preemptive_pass() {
  // When every pending job fits in the free GPUs nobody needs to be
  // displaced: a plain ranked pass decides the same starts, much cheaper.
  int64_t demand = 0;
  for (uint32_t i : s_.q.pending) demand += s_.jobs[i].gpus;
  if (demand <= s_.cluster.free_total()) {
    ranked_pass(std::vector<uint32_t>(s_.q.pending.begin(), s_.q.pending.end()));
    return;
  }
  std::vector<uint32_t> ids(s_.q.running.begin(), s_.q.running.end());
  std::sort(ids.begin(), ids.end());
  const size_t n_running = ids.size();  // ids[0, n_running) were running
  ids.insert(ids.end(), s_.q.pending.begin(), s_.q.pending.end());
  const std::vector<char> keep = keep_ranked_prefix(ids);
  // Which running jobs outside the prefix go, within the limits: the lowest
  // ranked first (max_per_pass); then preempted in `ids` order, as before
  // there were limits (the pending queue's order depends on it).
  const SimOptions::PreemptLimits& lim = s_.opt.preempt_limits;
  std::vector<char> go(ids.size(), 0), ranked(ids.size(), 0);
  std::vector<size_t> lowest_first;
  for (size_t k : order_) ranked[k] = 1;
  for (size_t k = 0; k < ids.size(); ++k)
    if (!ranked[k]) lowest_first.push_back(k);  // left out of the ranking: below every ranked job
  lowest_first.insert(lowest_first.end(), order_.rbegin(), order_.rend());
  int going = 0;
  for (size_t k : lowest_first) {
    const SimJob& j = s_.jobs[ids[k]];
    if (keep[k] || j.st != JobState::Running) continue;
    const double run = s_.now - j.seg_start;
    if (run < lim.min_run_s || (j.preempted > 0 && run < lim.job_interval_s) ||
        (lim.max_restarts > 0 && j.preempted >= lim.max_restarts) ||
        (lim.max_per_pass > 0 && going >= lim.max_per_pass))
      continue;
    go[k] = 1;
    ++going;
  }
  for (size_t k = 0; k < ids.size(); ++k)
    if (go[k]) s_.preempt(ids[k]);
  bool any = false;
  for (int round = 0; round < 2; ++round)  // kept jobs first, then fill what is left
    for (size_t k : order_) {
      if (s_.cluster.free_total() == 0) break;
      uint32_t i = ids[k];
      if (s_.jobs[i].st != JobState::Pending || (round == 0) != (keep[k] != 0)) continue;
      if (round == 1 && k < n_running) continue;  // just preempted: do not restart at once
      views_[k] = s_.view(i);
      if (try_start(i, s_.cluster.view(s_.now), views_[k])) any = true;
    }
  if (any) remove_started();
}

void Scheduler::joint_pass() {
  JointPolicy* joint = s_.pol.joint;
  std::vector<uint32_t> ids(s_.q.pending.begin(), s_.q.pending.end());
  build_views(ids);
  std::vector<Decision> ds = joint->decide(views_, s_.cluster.view(s_.now));
  bool any = false;
  for (Decision& d : ds) {
    if (d.job >= ids.size())
      throw std::logic_error("joint policy " + joint->name() + " chose a job index out of range");
    uint32_t i = ids[d.job];
    if (s_.jobs[i].st != JobState::Pending)
      throw std::logic_error("joint policy " + joint->name() + " started a job twice");
    s_.cluster.check_placement(s_.jobs[i], d.placement, joint->name());
    s_.start(i, std::move(d.placement));
    any = true;
  }
  if (any) remove_started();
}

}  // namespace duet::sim
