#include "policy/scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "policy/io/limits.h"
#include "policy/scenario/generate.h"

namespace duet {

namespace {

// Stream identifiers: one seeded stream per part of the scenario.
enum Stream : uint64_t { kRanges = 1, kCluster, kJobs, kArrivals };

// Every range drawn once, in a fixed order; integer keys rounded.
ScenarioSpec resolve(const ScenarioSpec& spec, uint64_t seed) {
  Rng rng(mix_seed(seed, kRanges));
  ScenarioSpec s = spec;
  auto fix = [&](Range& r, bool log, bool integer = false) {
    double v = scenario::draw(r, rng, log);
    if (integer) v = std::round(v);
    r = {v, v};
  };
  fix(s.load, false);
  fix(s.diurnal_amplitude, false);
  fix(s.burst_ratio, true);
  fix(s.burst_fraction, false);
  fix(s.duration_median_s, true);
  fix(s.duration_sigma, false);
  fix(s.pareto_alpha, false);
  fix(s.pareto_min_s, true);
  fix(s.cluster_gpus, true, true);
  fix(s.gpu_types, false, true);
  // The speed range stays a range: each flat type draws its own.
  return s;
}

}  // namespace

double reference_capacity(const ClusterModel& c) {
  double cap = 0;
  for (const auto& m : c.machines) cap += m.gpus * c.gpu_types[m.type].mean_speed;
  return cap;
}

double window_load(const std::vector<JobSpec>& jobs, double span, double capacity) {
  if (jobs.empty() || capacity <= 0) return 0;
  span = std::max(span, 1.0);
  double work = 0;
  for (const JobSpec& j : jobs) work += std::min(j.duration, span) * j.gpus;
  return work / span / capacity;
}

double offered_load(const Trace& t, const ClusterModel& c) {
  double last = 0;
  for (const JobSpec& j : t.jobs) last = std::max(last, j.submit);
  return window_load(t.jobs, last, reference_capacity(c));
}

namespace {

// The span of submissions whose window load is `load`. The load falls as the
// span grows (each job's share, GPUs x min(duration / span, 1), does), so it
// is bisected. Past the most the jobs can offer (every job inside the
// window: their GPUs over the capacity) the span is the shortest job's
// duration: every job submitted within it, as close as the jobs come.
double span_for_load(const std::vector<JobSpec>& jobs, double load, double capacity) {
  double work = 0, shortest = std::numeric_limits<double>::infinity();
  for (const JobSpec& j : jobs) {
    work += j.duration * j.gpus;
    shortest = std::min(shortest, j.duration);
  }
  double hi = std::max(1.0, work / (load * capacity));  // unclipped: load(hi) <= asked
  if (window_load(jobs, hi, capacity) >= load) return hi;
  const double lo0 = std::max(1.0, shortest);
  if (window_load(jobs, lo0, capacity) <= load) return lo0;
  double lo = lo0;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = std::sqrt(lo * hi);
    (window_load(jobs, mid, capacity) >= load ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

double hill_tail_index(std::vector<double> v, size_t k) {
  if (k == 0 || k >= v.size()) throw std::invalid_argument("hill_tail_index: need 0 < k < n");
  std::sort(v.begin(), v.end(), std::greater<>());
  const double xk = v[k];
  if (xk <= 0) throw std::invalid_argument("hill_tail_index: values must be > 0");
  double s = 0;
  for (size_t i = 0; i < k; ++i) s += std::log(v[i] / xk);
  return static_cast<double>(k) / s;
}

Scenario generate_scenario(const ScenarioSpec& spec, uint64_t seed, const ThroughputTable& table,
                           const ScenarioSources& sources) {
  Scenario out;
  out.resolved = resolve(spec, seed);
  const ScenarioSpec& s = out.resolved;

  Rng cluster_rng(mix_seed(seed, kCluster));
  out.cluster = scenario::make_cluster(s, spec.cluster_gpus, table, sources, cluster_rng);
  const ClusterModel model = build_cluster(out.cluster, table);
  out.capacity = reference_capacity(model);

  Rng job_rng(mix_seed(seed, kJobs));
  std::vector<JobSpec> jobs = scenario::make_jobs(s, model.total_gpus, table, sources, job_rng, &out.philly_vc);
  const double span = span_for_load(jobs, s.load.lo, out.capacity);
  if (span > kMaxTraceSeconds)
    throw std::invalid_argument(
        "the submissions would span more than a trace may (10 years): lower jobs or raise load");

  Rng arrival_rng(mix_seed(seed, kArrivals));
  std::vector<double> at = scenario::make_arrivals(s, static_cast<int>(jobs.size()), jobs.size() / span, arrival_rng);
  const double scale = at.back() > 0 ? span / at.back() : 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].id = static_cast<int64_t>(i + 1);
    jobs[i].submit = std::round(at[i] * scale * 1000) / 1000;
  }
  out.trace.source = "scenario trace";
  out.trace.jobs = std::move(jobs);
  out.offered_load = offered_load(out.trace, model);
  double gpus = 0;
  for (const JobSpec& j : out.trace.jobs) gpus += j.duration > 0 ? j.gpus : 0;
  out.max_load = out.capacity > 0 ? gpus / out.capacity : 0;
  return out;
}

}  // namespace duet
