#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/sim/sim_internal.h"

namespace duet::sim {

// Past about 2^53 steps at + step rounds back to at and the timer would fire
// at one instant for ever (a trace with a 1e300 s job hung `duet sim` in
// `next_fluct += 3600`): stop with a message instead.
double later(double at, double step, const char* timer) {
  const double next = at + step;
  if (!(next > at))
    throw std::runtime_error(
        fmt::format("simulated time {} s is too large to advance the {} timer by {} s", at, timer, step));
  return next;
}

SimState::SimState(const Trace& t, const ClusterModel& c, const ThroughputTable& tb, const PriceTable* p,
                   const SimOptions& o)
    : trace(t), table(tb), prices(p), opt(o), cluster(c, tb, o.model) {}

void SimState::load() {
  jobs = load_jobs(trace, table, cluster, opt, dropped);
  q.resize(jobs.size());
  dirty.resize(jobs.size());
  acct.init(jobs, opt, cluster.type_names().size());
  done = dropped;
}

// Co-located jobs slow each other down: everyone on these machines gets a new rate.
void SimState::mark_machines(const Placement& p) {
  if (cluster.perf().ideal()) return;
  for (const PlacementPart& part : p)
    for (uint32_t k : cluster.jobs_on(part.machine)) dirty.mark(k);
}

void SimState::start(uint32_t i, Placement p) {
  SimJob& j = jobs[i];
  const bool restart = j.first_start >= 0;
  if (!restart) j.first_start = now;
  if (restart && !cluster.perf().ideal()) j.remaining += opt.model.restart_overhead_s;
  j.placement = std::move(p);
  cluster.occupy(i, j);
  mark_machines(j.placement);
  j.st = JobState::Running;
  j.seg_start = j.last = now;
  j.rate = 0;
  q.add_running(i);
  dirty.mark(i);
  if (pol.observer) pol.observer->on_start(view(i), j.placement, now);
}

void SimState::stop(uint32_t i) {
  SimJob& j = jobs[i];
  const double seg = now - j.seg_start;
  j.remaining = std::max(0.0, j.remaining - j.rate * (now - j.last));
  j.last = now;
  j.run_s += seg;
  j.attained += seg * j.gpus;
  for (const PlacementPart& part : j.placement) acct.busy_type_s[cluster.gpu_type(part.machine)] += seg * part.gpus;
  cluster.release(i, j);
  mark_machines(j.placement);
  q.remove_running(i);
  freed = true;
}

void SimState::complete(uint32_t i) {
  stop(i);
  SimJob& j = jobs[i];
  j.st = JobState::Done;
  j.finish = now;
  j.remaining = 0;
  acct.last_finish = std::max(acct.last_finish, now);
  ++done;
  if (pol.ordering || pol.placement || pol.joint || pol.observer) {
    JobView v = view(i);
    if (pol.ordering) pol.ordering->on_finish(v, j.run_s);
    if (pol.placement) pol.placement->on_finish(v, j.run_s);
    if (pol.joint) pol.joint->on_finish(v, j.run_s);
    if (pol.observer) pol.observer->on_finish(v, now);
  }
}

void SimState::preempt(uint32_t i) {
  stop(i);
  SimJob& j = jobs[i];
  j.st = JobState::Pending;
  j.placement.clear();
  j.preempted++;
  ++acct.preemptions;
  ++acct.events;
  q.pending.push_back(i);
  if (pol.observer) pol.observer->on_preempt(view(i), now);
}

void SimState::recompute_rates() {
  for (uint32_t i : dirty.jobs()) {
    SimJob& j = jobs[i];
    if (j.st != JobState::Running) continue;
    j.remaining = std::max(0.0, j.remaining - j.rate * (now - j.last));
    j.last = now;
    double r = cluster.perf().rate(j.jt, j.gpus, j.placement);
    if (r == j.rate) continue;
    j.rate = r;
    q.completions.set(i, now + j.remaining / r);
  }
  dirty.clear();
}

}  // namespace duet::sim
