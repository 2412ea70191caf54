#include "policy/learn/agents/features.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace duet::learn {
namespace {

// Seconds in a day: time of day from trace seconds (trace start = midnight).
constexpr double kDay = 86400.0;

float lg(double x) { return static_cast<float>(std::log1p(std::max(0.0, x))); }

}  // namespace

void JobHistory::Stat::add(double x) {
  n += 1;
  const double d = x - mean;
  mean += d / n;
  m2 += d * (x - mean);
}

JobHistory::JobHistory(double prior_duration_s, double prior_log_std, int min_samples)
    : prior_s_(prior_duration_s), prior_std_(prior_log_std), min_n_(std::max(1, min_samples)) {}

void JobHistory::on_finish(const JobView& job, double run_s) {
  if (!(run_s > 0) || !std::isfinite(run_s)) return;  // nothing to learn from
  const double x = std::log(run_s);
  if (!job.user.empty()) user_[std::string(job.user)].add(x);
  if (!job.vc.empty()) vc_[std::string(job.vc)].add(x);
  if (!job.job_type.empty()) type_[std::string(job.job_type)].add(x);
  all_.add(x);
}

JobHistory::Prediction JobHistory::predict(const JobView& job) const {
  auto use = [&](const Stat& s) {
    const double var = s.n > 1 ? s.m2 / (s.n - 1) : prior_std_ * prior_std_;
    // shrink the spread towards the prior when samples are few
    const double w = s.n / (s.n + 2.0);
    const double sd = std::sqrt(w * var + (1 - w) * prior_std_ * prior_std_);
    return Prediction{std::exp(s.mean), sd, s.n};
  };
  auto find = [&](const std::unordered_map<std::string, Stat>& m, std::string_view k) -> const Stat* {
    if (k.empty()) return nullptr;
    auto it = m.find(std::string(k));
    return it != m.end() && it->second.n >= min_n_ ? &it->second : nullptr;
  };
  if (const Stat* s = find(user_, job.user)) return use(*s);
  if (const Stat* s = find(vc_, job.vc)) return use(*s);
  if (const Stat* s = find(type_, job.job_type)) return use(*s);
  if (all_.n >= min_n_) return use(all_);
  return Prediction{prior_s_, prior_std_, 0};
}

ClusterSummary summarise(const ClusterView& c) {
  ClusterSummary s;
  s.type_total.assign(std::max<size_t>(1, c.gpu_types.size()), 0);
  s.type_free.assign(s.type_total.size(), 0);
  for (const MachineView& m : c.machines) {
    const size_t t = std::min<size_t>(static_cast<size_t>(std::max(0, m.gpu_type)), s.type_total.size() - 1);
    s.type_total[t] += m.total_gpus;
    s.type_free[t] += m.free_gpus;
    s.total_gpus += m.total_gpus;
    s.free_gpus += m.free_gpus;
  }
  const double phase = 2 * std::numbers::pi * std::fmod(std::max(0.0, c.now_s), kDay) / kDay;
  s.tod_sin = std::sin(phase);
  s.tod_cos = std::cos(phase);
  return s;
}

void job_features(const JobView& j, const ClusterSummary& s, const JobHistory& h, std::vector<float>& out) {
  int allowed_total = s.total_gpus, allowed_free = s.free_gpus;
  if (j.type_mask != 0) {
    allowed_total = allowed_free = 0;
    for (size_t t = 0; t < s.type_total.size() && t < 64; ++t)
      if ((j.type_mask >> t) & 1u) {
        allowed_total += s.type_total[t];
        allowed_free += s.type_free[t];
      }
  }
  const JobHistory::Prediction p = h.predict(j);
  const double gpus = std::max(0, j.gpus);
  const size_t at = out.size();
  out.resize(at + kJobFeatures);
  float* r = out.data() + at;
  r[0] = lg(gpus);
  r[1] = j.type_mask != 0 ? 1.f : 0.f;
  r[2] = s.total_gpus > 0 ? static_cast<float>(allowed_total) / static_cast<float>(s.total_gpus) : 0.f;
  r[3] = allowed_free >= j.gpus ? 1.f : 0.f;
  r[4] = lg(j.wait_s / 60);
  r[5] = lg(j.attained_gpu_s / 3600);
  r[6] = lg(j.run_s / 60);
  r[7] = j.running ? 1.f : 0.f;
  r[8] = lg(p.duration_s / 60);
  r[9] = static_cast<float>(p.log_std);
  r[10] = lg(p.samples);
  r[kJobRemainingGpuHours] = lg((p.duration_s - j.run_s) * gpus / 3600);
  r[12] = static_cast<float>(s.tod_sin);
  r[13] = static_cast<float>(s.tod_cos);
  const bool limit = j.time_limit_s > 0;
  r[14] = limit ? lg(j.time_limit_s / 60) : 0.f;
  r[15] = limit ? 1.f : 0.f;
}

void job_feature_rows(std::span<const JobView> jobs, const ClusterSummary& s, const JobHistory& h,
                      std::vector<float>& out) {
  out.clear();
  out.reserve(jobs.size() * kJobFeatures);
  for (const JobView& j : jobs) job_features(j, s, h, out);
}

void cluster_features(const ClusterView& c, std::span<const JobView> pending, const ClusterSummary& s,
                      std::vector<float>& out) {
  out.assign(kClusterFeatures, 0.f);
  double asked = 0;
  for (const JobView& j : pending) asked += std::max(0, j.gpus);
  size_t with_free = 0;
  double jobs = 0;
  for (const MachineView& m : c.machines) {
    with_free += m.free_gpus > 0;
    jobs += m.jobs;
  }
  const double machines = std::max<size_t>(1, c.machines.size());
  const double total = std::max(1, s.total_gpus);
  out[0] = static_cast<float>(s.free_gpus / total);
  out[1] = lg(s.total_gpus);
  out[2] = lg(static_cast<double>(pending.size()));
  out[3] = lg(asked / total);
  out[4] = static_cast<float>(with_free / machines);
  out[5] = static_cast<float>(jobs / machines);
  out[6] = static_cast<float>(s.tod_sin);
  out[7] = static_cast<float>(s.tod_cos);
}

void add_order_prior(std::span<const float> rows, std::span<float> scores, double weight) {
  for (size_t i = 0; i < scores.size() && (i + 1) * kJobFeatures <= rows.size(); ++i)
    scores[i] -= static_cast<float>(weight * rows[i * kJobFeatures + kJobRemainingGpuHours]);
}

}  // namespace duet::learn
