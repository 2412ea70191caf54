#include "policy/sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/model/job_types.h"
#include "policy/sim/event_queue.h"

namespace duet {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A timer's next time. Past about 2^53 steps at + step rounds back to at and
// the timer would fire at one instant for ever (a trace with a 1e300 s job
// hung `duet sim` in `next_fluct += 3600`): stop with a message instead.
double later(double at, double step, const char* timer) {
  const double next = at + step;
  if (!(next > at))
    throw std::runtime_error(fmt::format("simulated time {} s is too large to advance the {} timer by {} s",
                                         at, timer, step));
  return next;
}
enum class St : uint8_t { Future, Pending, Running, Done, Dropped };

struct Job {
  const JobSpec* spec = nullptr;
  int jt = 0;
  int gpus = 0;
  uint64_t mask = 0;
  St st = St::Future;
  double remaining = 0;  // reference seconds of work left (as of `last`)
  double rate = 0;
  double last = 0;
  double first_start = -1, seg_start = 0, finish = -1, run_s = 0, attained = 0;
  int64_t preempted = 0;
  Placement placement;
};

}  // namespace

struct Simulator::Impl {
  const Trace& trace;
  const ClusterModel& cluster;
  const ThroughputTable& table;
  const PriceTable* prices;
  SimOptions opt;
  PerfModel model;

  OrderingPolicy* ordering = nullptr;
  PlacementPolicy* placement = nullptr;
  JointPolicy* joint = nullptr;
  SimObserver* observer = nullptr;

  std::vector<Job> jobs;       // in submit order
  size_t next_arrival = 0;
  int64_t done = 0, dropped = 0;
  double now = 0;
  CompletionQueue events;
  std::deque<uint32_t> pending;  // arrival (or re-queue) order
  std::vector<uint32_t> running; // unordered
  std::vector<uint32_t> running_pos;
  std::vector<uint32_t> arrivals_now;

  std::vector<std::string> type_names;
  std::vector<MachineView> mviews;
  std::vector<std::vector<uint32_t>> on;  // running jobs per machine
  std::vector<int> free_type;
  int free_total = 0, busy = 0;
  double next_fluct = kInf, next_period = kInf, next_sample = 0, sample_period = 1;

  bool freed = false, stalled = false;
  static constexpr int kIdlePasses = 1000;
  int idle_passes = 0;
  std::vector<uint32_t> dirty;
  std::vector<uint32_t> dirty_stamp;
  uint32_t stamp = 1;

  // Accounting.
  uint64_t n_events = 0, steps = 0;
  int64_t preemptions = 0;
  std::vector<double> busy_type_s;
  std::vector<Sample> samples;
  double first_submit = 0, last_finish = 0;
  std::vector<JobView> views;
  std::vector<size_t> order;
  std::vector<uint32_t> view_job;

  Impl(const Trace& t, const ClusterModel& c, const ThroughputTable& tb, const PriceTable* p, const SimOptions& o)
      : trace(t), cluster(c), table(tb), prices(p), opt(o), model(tb, c, o.model) {}

  // --- set-up ---------------------------------------------------------------
  void init() {
    for (const auto& g : cluster.gpu_types) type_names.push_back(g.name);
    free_type.assign(type_names.size(), 0);
    busy_type_s.assign(type_names.size(), 0);
    on.resize(cluster.machines.size());
    for (size_t m = 0; m < cluster.machines.size(); ++m) {
      const Machine& mc = cluster.machines[m];
      MachineView v;
      v.name = mc.name;
      v.gpu_type = mc.type;
      v.total_gpus = v.free_gpus = mc.gpus;
      v.rack = mc.rack;
      v.speed = model.known_speed(static_cast<int>(m));
      mviews.push_back(v);
      free_type[mc.type] += mc.gpus;
      free_total += mc.gpus;
    }
    std::vector<size_t> idx(trace.jobs.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return trace.jobs[a].submit < trace.jobs[b].submit; });
    jobs.resize(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) {
      const JobSpec& s = trace.jobs[idx[k]];
      // The trace readers refuse these; a trace built in code is checked here.
      if (!(s.submit >= 0 && s.submit <= kMaxTraceSeconds && s.duration >= 0 && s.duration <= kMaxTraceSeconds))
        throw InputError(trace.source, s.line, 0,
                         fmt::format("job {}: submit {} s and duration {} s must be from 0 to {} s (10 years)", s.id,
                                     s.submit, s.duration, kMaxTraceSeconds));
      Job& j = jobs[k];
      j.spec = &s;
      j.gpus = s.gpus;
      j.remaining = s.duration;
      j.jt = assign_job_type(s, table, opt.model.seed, trace.source);
      j.mask = type_mask(s);
      int cap = 0;
      for (size_t t = 0; t < type_names.size(); ++t)
        if (j.mask == 0 || (j.mask >> t) & 1u) cap += free_type[t];
      if (s.gpus > cap) {
        if (!opt.drop_oversized)
          throw InputError(trace.source, s.line, 0,
                           fmt::format("job {} asks {} GPUs but the cluster has only {} it may use "
                                       "(use --drop-oversized to leave such jobs out)", s.id, s.gpus, cap));
        j.st = St::Dropped;
        ++dropped;
      }
    }
    running_pos.assign(jobs.size(), 0);
    events.resize(jobs.size());
    dirty_stamp.assign(jobs.size(), 0);
    if (!jobs.empty()) {
      first_submit = jobs.front().spec->submit;
      double span = jobs.back().spec->submit - first_submit;
      double mean = 0;
      for (const auto& j : jobs) mean += j.spec->duration;
      mean /= static_cast<double>(jobs.size());
      sample_period = opt.sample_period_s > 0 ? opt.sample_period_s : std::max(1.0, (span + mean) / 1000.0);
      next_sample = first_submit;
    }
    if (!model.ideal() && opt.model.fluctuation_period_s > 0) next_fluct = opt.model.fluctuation_period_s;
    done = dropped;
  }

  uint64_t type_mask(const JobSpec& s) const {
    if (s.gpu_type.empty()) return 0;
    uint64_t mask = 0;
    size_t b = 0;
    for (;;) {
      size_t e = s.gpu_type.find('|', b);
      std::string name = s.gpu_type.substr(b, e == std::string::npos ? std::string::npos : e - b);
      int t = cluster.find_type(name);
      if (t < 0) {
        std::string known;
        for (auto& n : type_names) known += (known.empty() ? "" : ", ") + n;
        throw InputError(trace.source, s.line, 0,
                         fmt::format("job {}: gpu_type '{}' is not in the cluster (types: {})", s.id, name, known));
      }
      mask |= uint64_t{1} << t;
      if (e == std::string::npos) break;
      b = e + 1;
    }
    return mask;
  }

  bool periodic() const { return joint || (ordering && ordering->preemptive()); }

  // --- views ----------------------------------------------------------------
  JobView view(uint32_t i) const {
    const Job& j = jobs[i];
    JobView v;
    v.id = j.spec->id;
    v.gpus = j.gpus;
    v.type_mask = j.mask;
    v.submit_s = j.spec->submit;
    v.user = j.spec->user;
    v.vc = j.spec->vc;
    v.job_type = table.job_type_name(j.jt);
    v.running = j.st == St::Running;
    double seg = v.running ? now - j.seg_start : 0;
    v.run_s = j.run_s + seg;
    v.attained_gpu_s = j.attained + seg * j.gpus;
    double end = j.st == St::Done ? j.finish : now;
    v.wait_s = std::max(0.0, end - j.spec->submit - v.run_s);
    v.oracle_duration_s = j.spec->duration;
    v.oracle_remaining_s = std::max(0.0, v.running ? j.remaining - j.rate * (now - j.last) : j.remaining);
    return v;
  }

  ClusterView cview() const {
    ClusterView c;
    c.now_s = now;
    c.gpu_types = type_names;
    c.machines = mviews;
    c.total_gpus = cluster.total_gpus;
    c.free_gpus = free_total;
    return c;
  }

  int usable_free(const Job& j) const {
    if (j.mask == 0) return free_total;
    int n = 0;
    for (size_t t = 0; t < free_type.size(); ++t)
      if ((j.mask >> t) & 1u) n += free_type[t];
    return n;
  }

  // --- running jobs ---------------------------------------------------------
  void mark_dirty(uint32_t i) {
    if (dirty_stamp[i] == stamp) return;
    dirty_stamp[i] = stamp;
    dirty.push_back(i);
  }
  void mark_machine(int m) {
    for (uint32_t k : on[m]) mark_dirty(k);
  }

  void check_placement(const Job& j, const Placement& p, const std::string& who) const {
    int sum = 0;
    for (size_t a = 0; a < p.size(); ++a) {
      const PlacementPart& q = p[a];
      if (q.machine < 0 || q.machine >= static_cast<int>(mviews.size()) || q.gpus <= 0 ||
          q.gpus > mviews[q.machine].free_gpus || !(j.mask == 0 || (j.mask >> mviews[q.machine].gpu_type) & 1u))
        throw std::logic_error(fmt::format("policy {} gave an invalid placement for job {} (machine {}, {} GPUs)", who,
                                           j.spec->id, q.machine, q.gpus));
      for (size_t b = 0; b < a; ++b)
        if (p[b].machine == q.machine)
          throw std::logic_error(fmt::format("policy {} named machine {} twice for job {}", who, q.machine, j.spec->id));
      sum += q.gpus;
    }
    if (sum != j.gpus)
      throw std::logic_error(fmt::format("policy {} placed {} GPUs for job {} which needs {}", who, sum, j.spec->id, j.gpus));
  }

  void start(uint32_t i, Placement p) {
    Job& j = jobs[i];
    const bool restart = j.first_start >= 0;
    if (!restart) j.first_start = now;
    if (restart && !model.ideal()) j.remaining += opt.model.restart_overhead_s;
    j.placement = std::move(p);
    for (const PlacementPart& q : j.placement) {
      MachineView& mv = mviews[q.machine];
      mv.free_gpus -= q.gpus;
      mv.jobs += 1;
      free_type[mv.gpu_type] -= q.gpus;
      free_total -= q.gpus;
      on[q.machine].push_back(i);
      model.add_job(q.machine, j.jt);
      if (!model.ideal()) mark_machine(q.machine);
    }
    busy += j.gpus;
    j.st = St::Running;
    j.seg_start = j.last = now;
    j.rate = 0;
    running_pos[i] = static_cast<uint32_t>(running.size());
    running.push_back(i);
    mark_dirty(i);
    if (observer) observer->on_start(view(i), j.placement, now);
  }

  void stop(uint32_t i) {
    Job& j = jobs[i];
    const double seg = now - j.seg_start;
    j.remaining = std::max(0.0, j.remaining - j.rate * (now - j.last));
    j.last = now;
    j.run_s += seg;
    j.attained += seg * j.gpus;
    for (const PlacementPart& q : j.placement) {
      MachineView& mv = mviews[q.machine];
      mv.free_gpus += q.gpus;
      mv.jobs -= 1;
      free_type[mv.gpu_type] += q.gpus;
      free_total += q.gpus;
      busy_type_s[mv.gpu_type] += seg * q.gpus;
      auto& v = on[q.machine];
      v.erase(std::find(v.begin(), v.end(), i));
      model.remove_job(q.machine, j.jt);
      if (!model.ideal()) mark_machine(q.machine);
    }
    busy -= j.gpus;
    uint32_t pos = running_pos[i], last = running.back();
    running[pos] = last;
    running_pos[last] = pos;
    running.pop_back();
    events.remove(i);
    freed = true;
  }

  void complete(uint32_t i) {
    stop(i);
    Job& j = jobs[i];
    j.st = St::Done;
    j.finish = now;
    j.remaining = 0;
    last_finish = std::max(last_finish, now);
    ++done;
    if (ordering || placement || joint || observer) {
      JobView v = view(i);
      if (ordering) ordering->on_finish(v, j.run_s);
      if (placement) placement->on_finish(v, j.run_s);
      if (joint) joint->on_finish(v, j.run_s);
      if (observer) observer->on_finish(v, now);
    }
  }

  void preempt(uint32_t i) {
    stop(i);
    Job& j = jobs[i];
    j.st = St::Pending;
    j.placement.clear();
    j.preempted++;
    ++preemptions;
    ++n_events;
    pending.push_back(i);
    if (observer) observer->on_preempt(view(i), now);
  }

  void recompute_rates() {
    for (uint32_t i : dirty) {
      Job& j = jobs[i];
      if (j.st != St::Running) continue;
      j.remaining = std::max(0.0, j.remaining - j.rate * (now - j.last));
      j.last = now;
      double r = model.rate(j.jt, j.gpus, j.placement);
      if (r == j.rate) continue;
      j.rate = r;
      events.set(i, now + j.remaining / r);
    }
    dirty.clear();
    ++stamp;
  }

  // --- scheduling -----------------------------------------------------------
  // Tries to start job i; true if started.
  bool try_start(uint32_t i, const ClusterView& cv, const JobView& v) {
    Job& j = jobs[i];
    if (usable_free(j) < j.gpus) return false;
    std::optional<Placement> p = placement->place(v, cv);
    if (!p) return false;
    check_placement(j, *p, placement->name());
    start(i, std::move(*p));
    return true;
  }

  void build_views(const std::vector<uint32_t>& ids) {
    views.clear();
    view_job = ids;
    for (uint32_t i : ids) views.push_back(view(i));
    order.clear();
  }

  // Ranks `ids` and starts jobs in that order. A non-blocking pass offers only
  // the jobs that fit in the free GPUs they may use (the others could not
  // start anyway, free GPUs only shrink during a pass) and asks for a ranked
  // prefix of at most free_total jobs (each start takes a GPU); if GPUs are
  // left when the prefix is used up, the rest is ranked again.
  void ranked_pass(std::vector<uint32_t> ids) {
    const bool blocking = ordering->blocking();
    bool any = false;
    for (;;) {
      if (!blocking)
        std::erase_if(ids, [&](uint32_t i) { return jobs[i].st != St::Pending || usable_free(jobs[i]) < jobs[i].gpus; });
      if (ids.empty() || free_total == 0) break;
      build_views(ids);
      ClusterView cv = cview();
      cv.rank_limit = blocking ? 0 : static_cast<size_t>(free_total);
      ordering->rank(views, cv, order);
      bool stopped = false;
      for (size_t k : order) {
        if (k >= view_job.size()) throw std::logic_error("ordering " + ordering->name() + " ranked a job index out of range");
        if (free_total == 0) break;
        uint32_t i = view_job[k];
        if (jobs[i].st != St::Pending) continue;
        cv.free_gpus = free_total;
        if (try_start(i, cv, views[k])) any = true;
        else if (blocking) { stopped = true; break; }
      }
      // Done unless the policy ranked a prefix only and GPUs are left.
      if (blocking || stopped || order.size() >= ids.size() || free_total == 0) break;
      std::vector<char> ranked(ids.size(), 0);
      for (size_t k : order) if (k < ranked.size()) ranked[k] = 1;
      std::vector<uint32_t> rest;
      for (size_t k = 0; k < ids.size(); ++k) if (!ranked[k]) rest.push_back(ids[k]);
      ids.swap(rest);
    }
    if (any) remove_started();
  }

  void remove_started() {
    std::deque<uint32_t> rest;
    for (uint32_t i : pending)
      if (jobs[i].st == St::Pending) rest.push_back(i);
    pending.swap(rest);
  }

  void fifo_pass() {
    ClusterView cv = cview();
    bool any = false;
    for (size_t k = 0; k < pending.size() && free_total > 0; ++k) {
      uint32_t i = pending[k];
      cv.free_gpus = free_total;
      if (try_start(i, cv, view(i))) any = true;
      else if (ordering->blocking()) break;
    }
    if (!any) return;
    while (!pending.empty() && jobs[pending.front()].st != St::Pending) pending.pop_front();
    if (!ordering->blocking()) remove_started();
  }

  void preemptive_pass() {
    // When every pending job fits in the free GPUs nobody needs to be
    // displaced: a plain ranked pass decides the same starts, much cheaper.
    int64_t demand = 0;
    for (uint32_t i : pending) demand += jobs[i].gpus;
    if (demand <= free_total) {
      ranked_pass(std::vector<uint32_t>(pending.begin(), pending.end()));
      return;
    }
    std::vector<uint32_t> ids(running.begin(), running.end());
    std::sort(ids.begin(), ids.end());
    ids.insert(ids.end(), pending.begin(), pending.end());
    build_views(ids);
    ClusterView cv = cview();
    ordering->rank(views, cv, order);
    std::vector<char> keep(ids.size(), 0);
    const size_t n_running = running.size();  // ids[0, n_running) were running
    int budget = cluster.total_gpus;
    for (size_t k : order) {
      if (k >= ids.size()) throw std::logic_error("ordering " + ordering->name() + " ranked a job index out of range");
      if (jobs[ids[k]].gpus <= budget) keep[k] = 1, budget -= jobs[ids[k]].gpus;
    }
    for (size_t k = 0; k < ids.size(); ++k)
      if (!keep[k] && jobs[ids[k]].st == St::Running) preempt(ids[k]);
    bool any = false;
    for (int round = 0; round < 2; ++round)  // kept jobs first, then fill what is left
      for (size_t k : order) {
        if (free_total == 0) break;
        uint32_t i = ids[k];
        if (jobs[i].st != St::Pending || (round == 0) != (keep[k] != 0)) continue;
        if (round == 1 && k < n_running) continue;  // just preempted: do not restart at once
        cv = cview();
        views[k] = view(i);
        if (try_start(i, cv, views[k])) any = true;
      }
    if (any) remove_started();
  }

  void joint_pass() {
    std::vector<uint32_t> ids(pending.begin(), pending.end());
    build_views(ids);
    std::vector<Decision> ds = joint->decide(views, cview());
    bool any = false;
    for (Decision& d : ds) {
      if (d.job >= ids.size()) throw std::logic_error("joint policy " + joint->name() + " chose a job index out of range");
      uint32_t i = ids[d.job];
      if (jobs[i].st != St::Pending) throw std::logic_error("joint policy " + joint->name() + " started a job twice");
      check_placement(jobs[i], d.placement, joint->name());
      start(i, std::move(d.placement));
      any = true;
    }
    if (any) remove_started();
  }

  void schedule(bool timer) {
    if (joint) {
      if (freed || timer || !arrivals_now.empty()) joint_pass();
    } else if (ordering->preemptive()) {
      if (freed || timer || !arrivals_now.empty()) preemptive_pass();
    } else if (freed || !stalled) {
      if (ordering->arrival_order()) fifo_pass();
      else ranked_pass(std::vector<uint32_t>(pending.begin(), pending.end()));
    } else if (!arrivals_now.empty() && !ordering->blocking()) {
      // Nothing was freed since the last full pass left every older job
      // unplaceable, so only the new arrivals can start.
      ranked_pass(arrivals_now);
    }
    freed = false;
    stalled = !pending.empty();  // every pending job was tried (or is blocked)
    arrivals_now.clear();
  }

  // --- the event loop -------------------------------------------------------
  double next_event_time() {
    double t = events.empty() ? kInf : events.top_time();
    while (next_arrival < jobs.size() && jobs[next_arrival].st == St::Dropped) ++next_arrival;
    if (next_arrival < jobs.size()) t = std::min(t, jobs[next_arrival].spec->submit);
    if (t < kInf || !running.empty() || !pending.empty()) t = std::min(t, next_fluct);
    if (!running.empty() || !pending.empty()) t = std::min(t, std::max(next_period, now));
    return t;
  }

  bool step() {
    if (done == static_cast<int64_t>(jobs.size())) return false;
    const double t = next_event_time();
    if (t == kInf) throw std::logic_error("simulator stalled with jobs left");
    while (next_sample <= t) {
      samples.push_back(Sample{next_sample, busy, static_cast<int>(pending.size()), static_cast<int>(running.size())});
      next_sample = later(next_sample, sample_period, "sample");
    }
    now = t;
    // 1. completions
    while (!events.empty() && events.top_time() == t) {
      complete(events.top_job());  // removes it from the queue
      ++n_events;
    }
    // 2. arrivals
    while (next_arrival < jobs.size() && (jobs[next_arrival].st == St::Dropped || jobs[next_arrival].spec->submit == t)) {
      if (jobs[next_arrival].st != St::Dropped) {
        jobs[next_arrival].st = St::Pending;
        pending.push_back(static_cast<uint32_t>(next_arrival));
        arrivals_now.push_back(static_cast<uint32_t>(next_arrival));
        ++n_events;
      }
      ++next_arrival;
    }
    // 3. timers
    bool timer = false;
    if (next_fluct <= t) {
      model.advance_fluctuation();
      for (uint32_t i : running) mark_dirty(i);
      next_fluct = later(next_fluct, opt.model.fluctuation_period_s, "fluctuation");
      ++n_events;
    }
    if (periodic() && next_period <= t) {
      timer = true;
      ++n_events;
    }
    if (periodic() && (timer || next_period == kInf)) next_period = later(t, opt.period_s, "decision period");
    // 4. one scheduling pass
    if (!pending.empty()) schedule(timer);
    else arrivals_now.clear(), freed = false, stalled = false;
    recompute_rates();
    // An idle cluster, nothing left to arrive, jobs waiting: the policy will
    // not start them (periodic policies get kIdlePasses more chances).
    if (running.empty() && !pending.empty() && next_arrival >= jobs.size()) {
      if (!periodic() || ++idle_passes > kIdlePasses)
        throw std::runtime_error(fmt::format("{} job(s) can never start: the policy placed none of them on the idle cluster",
                                             pending.size()));
    } else {
      idle_passes = 0;
    }
    if (opt.progress && (++steps & 0x3fff) == 0) opt.progress(static_cast<double>(done) / std::max<size_t>(1, jobs.size()));
    return done < static_cast<int64_t>(jobs.size());
  }

  SimResult result() const {
    SimResult r;
    if (joint) r.ordering = r.placement = joint->name();
    else if (ordering && placement) r.ordering = ordering->name(), r.placement = placement->name(), r.oracle = ordering->oracle();
    r.ideal = model.ideal();
    r.seed = opt.model.seed;
    r.total_gpus = cluster.total_gpus;
    r.events = n_events;
    r.preemptions = preemptions;
    std::map<std::string, std::pair<double, int64_t>> vc;
    double sum = 0, qsum = 0;
    for (const Job& j : jobs) {
      if (j.st != St::Done) continue;
      double jct = j.finish - j.spec->submit;
      double wait = std::max(0.0, jct - j.run_s);
      r.jct_sorted.push_back(jct);
      sum += jct;
      qsum += wait;
      r.max_wait_s = std::max(r.max_wait_s, wait);
      auto& a = vc[j.spec->vc];
      a.first += jct, a.second += 1;
    }
    r.jobs = static_cast<int64_t>(r.jct_sorted.size());
    std::sort(r.jct_sorted.begin(), r.jct_sorted.end());
    if (r.jobs > 0) {
      r.avg_jct_s = sum / static_cast<double>(r.jobs);
      r.avg_queue_s = qsum / static_cast<double>(r.jobs);
      r.p50_jct_s = percentile(r.jct_sorted, 50);
      r.p95_jct_s = percentile(r.jct_sorted, 95);
      r.p99_jct_s = percentile(r.jct_sorted, 99);
      r.makespan_s = last_finish - first_submit;
    }
    for (const auto& [k, a] : vc) r.vc_avg_jct_s[k.empty() ? "-" : k] = a.first / static_cast<double>(a.second);
    // Running segments not yet closed count as busy up to now.
    std::vector<double> busy_s = busy_type_s;
    for (uint32_t i : running)
      for (const PlacementPart& q : jobs[i].placement) busy_s[mviews[q.machine].gpu_type] += (now - jobs[i].seg_start) * q.gpus;
    for (size_t t = 0; t < busy_s.size(); ++t) {
      r.busy_gpu_s += busy_s[t];
      if (prices) {
        const GpuPrice& p = prices->lookup(type_names[t]);
        r.fees_usd += busy_s[t] * p.usd_per_gpu_hour / 3600.0;
        r.energy_kwh += busy_s[t] * p.watts / 3.6e6;
      }
    }
    if (r.makespan_s > 0 && cluster.total_gpus > 0) r.gpu_util = r.busy_gpu_s / (cluster.total_gpus * r.makespan_s);
    r.samples = samples;
    return r;
  }
};

Simulator::Simulator(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                     const PriceTable* prices, const SimOptions& options)
    : p_(std::make_unique<Impl>(trace, cluster, table, prices, options)) {
  if (!(options.period_s > 0)) throw std::invalid_argument("period must be > 0 seconds");
  p_->init();
}
Simulator::~Simulator() = default;

void Simulator::set_policies(OrderingPolicy* ordering, PlacementPolicy* placement) {
  if (!ordering || !placement) throw std::invalid_argument("set_policies: both policies are needed");
  p_->ordering = ordering;
  p_->placement = placement;
  p_->joint = nullptr;
  ordering->pair_with(*placement);
}
void Simulator::set_joint(JointPolicy* joint) {
  if (!joint) throw std::invalid_argument("set_joint: no policy");
  p_->joint = joint;
  p_->ordering = nullptr;
  p_->placement = nullptr;
}
void Simulator::set_observer(SimObserver* o) { p_->observer = o; }

bool Simulator::step() {
  if (!p_->joint && !(p_->ordering && p_->placement)) throw std::logic_error("Simulator::step: no policies set");
  return p_->step();
}

SimResult Simulator::run() {
  auto t0 = std::chrono::steady_clock::now();
  while (step()) {
  }
  SimResult r = result();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SimResult Simulator::result() const { return p_->result(); }
double Simulator::now() const { return p_->now; }
int64_t Simulator::dropped_jobs() const { return p_->dropped; }

}  // namespace duet
