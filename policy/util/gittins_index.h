// The Gittins rank of a job whose duration is log-normal (Gittins 1989; for
// M/G/1 the Gittins index policy minimises mean response time among
// policies that know only the duration distribution and each job's attained
// service, Aalto et al. 2009):
//     rank(a) = inf_q  E[min(X - a, q) | X > a] / P(X - a <= q | X > a)
// the least expected further service per completion over every next
// quantum q, in seconds (the inverse of the Gittins index). Low rank runs
// first. Where the hazard falls it grows with attained service a (LAS-like),
// where it rises it falls (SRPT-like). Seconds in, seconds out: scale-free.
// Shared by the gittins baseline (policy/baselines/gittins.h) and the
// learned ordering's preemptive prior (policy/learn/agents/order_prior.h),
// which the Slurm plugins run too: header-only, no library.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace duet {

// What a running job's rank is multiplied by, in the gittins ordering and
// the learned prior alike: it keeps its GPUs until a pending job ranks
// below half of it, so jobs of nearly equal rank do not displace each other
// (and pay the restart) every decision period.
inline constexpr double kGittinsRunningCredit = 0.5;

namespace gittins_detail {

// Mills ratio Q(z) / phi(z) of the standard normal (Q the upper tail), with
// its asymptotic series where Q and phi would underflow.
inline double mills(double z) {
  if (z < 30) return 0.5 * std::erfc(z * M_SQRT1_2) / (std::exp(-0.5 * z * z) * 0.3989422804014327);
  const double r = 1 / (z * z);
  return (1 - r + 3 * r * r - 15 * r * r * r) / z;
}

}  // namespace gittins_detail

// rank(a), seconds, of a log-normal duration with this median (seconds) and
// log spread, after attained_s seconds: the minimum over about 90 quanta and
// "to completion". Everything is computed given X > a, as ratios of normal
// tails through Mills ratios, so a job far in the tail gets a finite rank.
// Inputs that are not finite rank last (a finite value, so sorting by it
// stays well defined).
inline double gittins_rank_exact_s(double median_s, double log_sigma, double attained_s) {
  using gittins_detail::mills;
  if (!std::isfinite(median_s) || !std::isfinite(log_sigma) || !std::isfinite(attained_s))
    return std::numeric_limits<double>::max();
  const double mu = std::log(std::max(median_s, 1e-3));
  const double sigma = std::clamp(log_sigma, 0.05, 5.0);
  const double a = std::max(attained_s, 0.0);
  // In log-duration units z = (log x - mu) / sigma. Below z = -8 the job has
  // done a negligible part of its distribution: P(X > a) is 1 to 1e-15 and
  // the plain normal tails are exact enough; above, ratios of tails go
  // through Mills ratios, which stay finite however far out a is.
  const double za = a > 0 ? (std::log(a) - mu) / sigma : -std::numeric_limits<double>::infinity();
  const bool fresh = za < -8;
  const double ma = fresh ? 1 : mills(za), mean_scale = std::exp(mu + 0.5 * sigma * sigma);
  auto upper = [](double z) { return 0.5 * std::erfc(z * M_SQRT1_2); };
  // P(X > b | X > a) and E[X; X > b] / P(X > a), for b = exp(mu + sigma z).
  auto tail = [&](double z) { return fresh ? upper(z) : std::exp(0.5 * (za * za - z * z)) * mills(z) / ma; };
  auto tail_mean = [&](double z) {
    if (fresh) return mean_scale * upper(z - sigma);
    return std::exp(mu + 0.5 * sigma * sigma + 0.5 * (za * za - (z - sigma) * (z - sigma))) * mills(z - sigma) / ma;
  };
  const double z0 = fresh ? -8 : za;
  const double mean_a = fresh ? mean_scale * upper(za - sigma) : tail_mean(za);  // E[X | X > a]
  double best = std::max(mean_a - a, 0.0);                                       // run to completion
  for (double d = 0.02; d < 40 && z0 + d < std::max(z0, 0.0) + 12; d *= 1.1) {
    const double z = z0 + d, b = std::exp(mu + sigma * z);
    const double done = 1 - tail(z);  // P(X <= b | X > a)
    // E[min(X, b) - a | X > a]; for a fresh job E[X; X <= b] directly (no
    // difference of two nearly equal means).
    const double below = fresh ? mean_scale * upper(sigma - z) : mean_a - tail_mean(z);
    const double work = b * tail(z) - a + below;
    if (done > 1e-9 && work > 0) best = std::min(best, work / done);
  }
  return best > 0 ? best : 1e-3;
}

namespace gittins_detail {

// rank is scale-free: rank(m, sigma, a) = m * R(sigma, z), z = log(a / m) /
// sigma. R is tabulated once (about 32,000 exact ranks, some 0.3 s, on
// first use) over sigma in [0.05, 5] (geometric) and z in [-8, 32], and read
// with bilinear interpolation of log R: what a scheduler pass over
// thousands of jobs needs.
inline constexpr int kSigmas = 100, kZs = 321;
inline constexpr double kZLo = -8, kZStep = 0.125;
inline const double kLogSigmaLo = std::log(0.05), kLogSigmaStep = std::log(100.0) / (kSigmas - 1);

struct RankTable {
  float log_r[kSigmas][kZs];  // log R at (sigma_i, z_j)
  float log_r_zero[kSigmas];  // log R at a = 0
  RankTable() {
    for (int i = 0; i < kSigmas; ++i) {
      const double sigma = std::exp(kLogSigmaLo + i * kLogSigmaStep);
      log_r_zero[i] = static_cast<float>(std::log(gittins_rank_exact_s(1, sigma, 0)));
      for (int j = 0; j < kZs; ++j)
        log_r[i][j] =
            static_cast<float>(std::log(gittins_rank_exact_s(1, sigma, std::exp(sigma * (kZLo + j * kZStep)))));
    }
  }
};

inline const RankTable& rank_table() {
  static const RankTable t;  // thread-safe initialisation
  return t;
}

}  // namespace gittins_detail

// rank(a) as gittins_rank_exact_s, from the table (a job that has just
// started, z < -8, is computed): within 1.5% of it
// (check_policy_baselines compares them). Beyond the table's last column
// (z > 32) it follows the mean residual life's asymptote, a sigma / z.
inline double gittins_rank_s(double median_s, double log_sigma, double attained_s) {
  using namespace gittins_detail;
  if (!std::isfinite(median_s) || !std::isfinite(log_sigma) || !std::isfinite(attained_s))
    return std::numeric_limits<double>::max();
  const RankTable& t = rank_table();
  const double m = std::max(median_s, 1e-3);
  const double sigma = std::clamp(log_sigma, 0.05, 5.0);
  const double si = std::clamp((std::log(sigma) - kLogSigmaLo) / kLogSigmaStep, 0.0, kSigmas - 1.0);
  const int i0 = std::min(static_cast<int>(si), kSigmas - 2);
  const double fi = si - i0;
  auto column = [&](int j) { return (1 - fi) * t.log_r[i0][j] + fi * t.log_r[i0 + 1][j]; };
  const double z = attained_s > 0 ? std::log(attained_s / m) / sigma : -std::numeric_limits<double>::infinity();
  if (attained_s <= 0) return m * std::exp((1 - fi) * t.log_r_zero[i0] + fi * t.log_r_zero[i0 + 1]);
  if (z <= kZLo) return gittins_rank_exact_s(median_s, log_sigma, attained_s);  // just started: rare, computed
  const double zj = (z - kZLo) / kZStep;
  if (zj >= kZs - 1) {
    const double z_last = kZLo + (kZs - 1) * kZStep;
    return m * std::exp(column(kZs - 1) + sigma * (z - z_last)) * (z_last / z);
  }
  const int j0 = static_cast<int>(zj);
  const double fj = zj - j0;
  return m * std::exp((1 - fj) * column(j0) + fj * column(j0 + 1));
}

}  // namespace duet
