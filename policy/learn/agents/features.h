// Features of the learned scheduler's ordering agent, computed from the
// policy seam's views (policy/core/policy.h). Torch-free and pure: the
// simulator adapter and the Slurm priority plugin (which converts its own job
// records into JobView) call these very functions, so a model sees the same
// inputs in training and in production. Layouts: duet-model(5), FEATURES.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "policy/core/policy.h"

namespace duet::learn {

// Job feature row (kJobFeatures floats per pending job):
//   0 log1p(GPUs asked)
//   1 1 if the job constrains the GPU type, else 0
//   2 share of the cluster's GPUs the job may use (type constraint)
//   3 1 if the job fits the free GPUs it may use right now, else 0
//   4 log1p(wait minutes)
//   5 log1p(attained service, GPU-hours)
//   6 log1p(run minutes so far)
//   7 1 if running (preemptive callers), else 0
//   8 log1p(predicted duration minutes)       (history, QSSF-like)
//   9 uncertainty: std of log duration in the history used
//  10 log1p(history samples behind the prediction)
//  11 log1p(predicted remaining GPU-hours) = (pred - run) * GPUs
//  12 sin(2 pi time-of-day)   13 cos(2 pi time-of-day)
//  14 log1p(time limit minutes), 0 when unknown
//  15 1 if a time limit is known, else 0
inline constexpr std::uint32_t kJobFeatures = 16;
// The column the QSSF-like ordering prior reads (add_order_prior).
inline constexpr std::uint32_t kJobRemainingGpuHours = 11;

// Cluster feature row (kClusterFeatures floats):
//   0 free GPUs / total GPUs          1 log1p(total GPUs)
//   2 log1p(pending jobs)             3 log1p(pending GPUs asked / total GPUs)
//   4 share of machines with >= 1 free GPU
//   5 mean jobs per machine (co-location)
//   6 sin(2 pi time-of-day)           7 cos(2 pi time-of-day)
inline constexpr std::uint32_t kClusterFeatures = 8;

// Duration history, learned from finished jobs (like QSSF, Helios SC'21):
// running statistics of log(run seconds) per user, vc, job type and
// overall. A prediction uses the most specific key with at least
// min_samples samples. Not split by GPU count: a user's few jobs of one size
// gave a confident but wrong duration, and the Gittins prior trusts the
// spread (models/HISTORY.md, "One duration history per user").
// Not thread-safe; callers serialise.
class JobHistory {
 public:
  struct Prediction {
    double duration_s;  // exp(mean log duration)
    double log_std;     // std of log duration (prior when too few samples)
    double samples;     // samples behind it (0: prior only)
  };
  explicit JobHistory(double prior_duration_s = 3600, double prior_log_std = 1.5, int min_samples = 2);

  void on_finish(const JobView& job, double run_s);
  Prediction predict(const JobView& job) const;
  std::size_t jobs_seen() const { return static_cast<std::size_t>(all_.n); }

 private:
  struct Stat {
    double n = 0, mean = 0, m2 = 0;  // Welford
    void add(double x);
  };
  double prior_s_, prior_std_;
  int min_n_;
  std::unordered_map<std::string, Stat> user_, vc_, type_;
  Stat all_;
};

// What job rows share: free/total GPUs per type index, time of day.
struct ClusterSummary {
  std::vector<int> type_total, type_free;
  int total_gpus = 0, free_gpus = 0;
  double tod_sin = 0, tod_cos = 1;
};
ClusterSummary summarise(const ClusterView& c);

// Appends kJobFeatures floats for `job` to out.
void job_features(const JobView& job, const ClusterSummary& s, const JobHistory& h, std::vector<float>& out);
// All pending jobs, row-major (resizes out to jobs.size() * kJobFeatures).
void job_feature_rows(std::span<const JobView> jobs, const ClusterSummary& s, const JobHistory& h,
                      std::vector<float>& out);
// kClusterFeatures floats (resizes out).
void cluster_features(const ClusterView& c, std::span<const JobView> pending, const ClusterSummary& s,
                      std::vector<float>& out);

// The ordering agent's explicit prior, shared by the simulator policy and
// priority/duet: scores[i] -= weight * log1p(predicted remaining GPU-hours)
// of row i (feature 11, QSSF-like). The network learns a residual on top, so
// an untrained or briefly trained model already orders sensibly.
inline constexpr double kOrderPriorWeight = 3.0;
void add_order_prior(std::span<const float> rows, std::span<float> scores, double weight = kOrderPriorWeight);

}  // namespace duet::learn
