#include "policy/learn/agents/order_prior.h"

#include <cmath>

#include "policy/learn/agents/features.h"

namespace duet::learn {
namespace {

constexpr std::uint32_t kAttainedGpuHours = 5;  // log1p(attained GPU-hours)
constexpr std::uint32_t kRunning = 7;
// Tiresias' queue limits, 3,250 and 7,200 GPU-seconds, as log1p(GPU-hours).
const float kQueue1 = static_cast<float>(std::log1p(3250.0 / 3600.0));
const float kQueue2 = static_cast<float>(std::log1p(7200.0 / 3600.0));

}  // namespace

float las_level(std::span<const float> row) {
  const float a = row[kAttainedGpuHours];
  const float queue = a < kQueue1 ? 0.f : a < kQueue2 ? 1.f : 2.f;
  return kLasQueueStep * (queue - (row[kRunning] > 0.5f ? kLasRunningCredit : 0.f));
}

void order_prior_terms(std::span<const float> rows, std::size_t n, std::vector<float>& qssf, std::vector<float>& las) {
  qssf.resize(n);
  las.resize(n);
  for (std::size_t i = 0; i < n && (i + 1) * kJobFeatures <= rows.size(); ++i) {
    const std::span<const float> row = rows.subspan(i * kJobFeatures, kJobFeatures);
    qssf[i] = row[kJobRemainingGpuHours];
    las[i] = las_level(row);
  }
}

void add_blended_order_prior(std::span<const float> rows, std::span<float> scores, double weight, float gate) {
  for (std::size_t i = 0; i < scores.size() && (i + 1) * kJobFeatures <= rows.size(); ++i) {
    const std::span<const float> row = rows.subspan(i * kJobFeatures, kJobFeatures);
    const float blend = (1.f - gate) * row[kJobRemainingGpuHours] + gate * las_level(row);
    scores[i] -= static_cast<float>(weight) * blend;
  }
}

void add_model_order_prior(const NetConfig& nets, std::span<const float> rows, std::span<float> scores, double weight,
                           float gate) {
  if (nets.ordering.preemptive)
    add_blended_order_prior(rows, scores, weight, gate);
  else
    add_order_prior(rows, scores, weight);
}

}  // namespace duet::learn
