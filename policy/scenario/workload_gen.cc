// Jobs of a scenario: GPU counts from the mix (or a Philly row), durations
// log-normal or Pareto (or the Philly row's), a Gavel job type measured at
// the job's scale, a user of Zipf-distributed activity and the user's VC.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "policy/scenario/generate.h"

namespace duet::scenario {

namespace {

// Index drawn in proportion to the weights.
size_t pick(const std::vector<double>& w, Rng& rng) {
  double sum = 0;
  for (double x : w) sum += x;
  double u = rng.uniform() * sum;
  for (size_t i = 0; i < w.size(); ++i) {
    if (u < w[i]) return i;
    u -= w[i];
  }
  return w.size() - 1;
}

std::vector<double> zipf(size_t n, double skew) {
  std::vector<double> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 1 / std::pow(static_cast<double>(i + 1), skew);
  return w;
}

double duration(const ScenarioSpec& s, Rng& rng) {
  double d = 0;
  if (s.duration == "pareto") {
    d = s.pareto_min_s.lo * std::pow(1 - rng.uniform(), -1 / s.pareto_alpha.lo);
  } else {
    d = s.duration_median_s.lo * std::exp(s.duration_sigma.lo * rng.normal());
  }
  return std::min(d, s.duration_max_s);
}

// The Philly rows a source resamples: all, or one VC's (named, else drawn
// among the VCs with at least 200 jobs, in name order).
std::vector<const JobSpec*> philly_pool(const ScenarioSpec& s, const ScenarioSources& src, int cluster_gpus, Rng& rng,
                                        std::string* vc_used) {
  if (!src.philly) throw std::invalid_argument("source = " + s.source + " needs the Philly trace (philly_path)");
  std::string vc;
  if (s.source == "philly-vc") {
    std::map<std::string, int> count;
    for (const JobSpec& j : src.philly->jobs) ++count[j.vc];
    if (!s.philly_vc.empty()) {
      if (!count.count(s.philly_vc)) throw std::invalid_argument("philly_vc: no jobs of VC '" + s.philly_vc + "'");
      vc = s.philly_vc;
    } else {
      std::vector<std::string> big;
      for (auto& [name, n] : count)
        if (n >= 200) big.push_back(name);
      if (big.empty()) throw std::invalid_argument("philly-vc: no VC has 200 jobs");
      vc = big[rng.below(big.size())];
    }
  }
  std::vector<const JobSpec*> pool;
  for (const JobSpec& j : src.philly->jobs)
    if ((vc.empty() || j.vc == vc) && j.gpus <= cluster_gpus) pool.push_back(&j);
  if (pool.empty())
    throw std::invalid_argument(
        fmt::format("no Philly job{} fits a cluster of {} GPUs", vc.empty() ? "" : " of VC " + vc, cluster_gpus));
  *vc_used = vc;
  return pool;
}

}  // namespace

std::vector<JobSpec> make_jobs(const ScenarioSpec& s, int cluster_gpus, const ThroughputTable& table,
                               const ScenarioSources& src, Rng& rng, std::string* vc_used) {
  // Job sizes the cluster can hold at all (a job may span machines).
  std::vector<double> mix_w;
  std::vector<int> mix_g;
  for (auto [g, w] : s.gpu_mix)
    if (g <= cluster_gpus) mix_g.push_back(g), mix_w.push_back(w);
  const bool philly = s.source != "synthetic";
  std::vector<const JobSpec*> pool;
  if (philly)
    pool = philly_pool(s, src, cluster_gpus, rng, vc_used);
  else if (mix_g.empty())
    throw std::invalid_argument(fmt::format("gpu_mix: no size fits a cluster of {} GPUs", cluster_gpus));

  // Job-type popularity: a seeded order of all types, Zipf over it.
  std::vector<double> type_w(table.job_types(), 1.0);
  if (s.job_types == "zipf") {
    std::vector<int> perm(table.job_types());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.below(i)]);
    std::vector<double> z = zipf(perm.size(), s.job_type_skew);
    for (size_t r = 0; r < perm.size(); ++r) type_w[perm[r]] = z[r];
  }
  const std::vector<double> user_w = zipf(s.users, s.user_skew);
  std::vector<int> user_vc(s.users);
  for (int& v : user_vc) v = static_cast<int>(rng.below(s.vcs));

  std::vector<JobSpec> jobs(s.jobs);
  for (JobSpec& j : jobs) {
    if (philly) {
      const JobSpec& row = *pool[rng.below(pool.size())];
      j.gpus = row.gpus, j.duration = row.duration, j.vc = row.vc;
    } else {
      j.gpus = mix_g[pick(mix_w, rng)];
      j.duration = duration(s, rng);
    }
    j.duration = std::round(j.duration * 1000) / 1000;
    if (s.job_types != "none") {
      const std::vector<int>& at = table.job_types_at_scale(ThroughputTable::scale_index(j.gpus));
      std::vector<double> w;
      for (int t : at) w.push_back(type_w[t]);
      if (!at.empty()) j.job_type = table.job_type_name(at[pick(w, rng)]);
    }
    const size_t u = pick(user_w, rng);
    if (philly) {
      j.user = fmt::format("{}-u{:03d}", j.vc, u);
    } else {
      j.user = fmt::format("u{:03d}", u);
      j.vc = fmt::format("vc{}", user_vc[u]);
    }
  }
  return jobs;
}

std::vector<double> make_arrivals(const ScenarioSpec& s, int n, double rate, Rng& rng) {
  std::vector<double> t;
  t.reserve(n);
  auto expo = [&](double r) { return -std::log(1 - rng.uniform()) / r; };
  double now = 0;
  if (s.arrival == "diurnal") {
    // Thinning: candidates at the peak rate, kept in proportion to the rate now.
    const double a = s.diurnal_amplitude.lo, period = s.diurnal_period_h * 3600;
    const double phase = rng.uniform() * period;
    while (static_cast<int>(t.size()) < n) {
      now += expo(rate * (1 + a));
      if (rng.uniform() * (1 + a) < 1 + a * std::sin(6.283185307179586 * (now + phase) / period)) t.push_back(now);
    }
  } else if (s.arrival == "mmpp") {
    // Two states: calm and burst (burst_ratio x the calm rate), exponential
    // stays whose means put burst_fraction of the time in bursts.
    const double f = s.burst_fraction.lo, r = s.burst_ratio.lo;
    const double calm = rate / (1 - f + f * r);
    const double stay[2] = {s.burst_mean_s * (1 - f) / f, s.burst_mean_s};
    int state = rng.uniform() < f ? 1 : 0;
    double until = expo(1 / stay[state]);
    while (static_cast<int>(t.size()) < n) {
      const double next = now + expo(state ? calm * r : calm);
      if (next > until) {  // memoryless: start afresh in the other state
        now = until;
        state ^= 1;
        until = now + expo(1 / stay[state]);
        continue;
      }
      now = next;
      t.push_back(now);
    }
  } else {
    while (static_cast<int>(t.size()) < n) t.push_back(now += expo(rate));
  }
  const double first = t.empty() ? 0 : t.front();
  for (double& x : t) x -= first;
  return t;
}

}  // namespace duet::scenario
