#include "policy/learn/agents/order_prior.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "policy/learn/agents/features.h"
#include "policy/util/gittins_index.h"

namespace duet::learn {
namespace {

constexpr std::uint32_t kGpus = 0;              // log1p(GPUs)
constexpr std::uint32_t kAttainedGpuHours = 5;  // log1p(attained GPU-hours)
constexpr std::uint32_t kRunMinutes = 6;        // log1p(run minutes)
constexpr std::uint32_t kRunning = 7;
constexpr std::uint32_t kPredictedMinutes = 8;  // log1p(median duration minutes), history
constexpr std::uint32_t kLogSpread = 9;         // std of log duration, history
// Tiresias' queue limits, 3,250 and 7,200 GPU-seconds, as log1p(GPU-hours).
const float kQueue1 = static_cast<float>(std::log1p(3250.0 / 3600.0));
const float kQueue2 = static_cast<float>(std::log1p(7200.0 / 3600.0));

}  // namespace

float las_level(std::span<const float> row) {
  const float a = row[kAttainedGpuHours];
  const float queue = a < kQueue1 ? 0.f : a < kQueue2 ? 1.f : 2.f;
  return kLasQueueStep * (queue - (row[kRunning] > 0.5f ? kLasRunningCredit : 0.f));
}

float gittins_level(std::span<const float> row) {
  const double median_s = std::expm1(static_cast<double>(row[kPredictedMinutes])) * 60;
  const double run_s = std::expm1(static_cast<double>(row[kRunMinutes])) * 60;
  const double gpus = std::max(1.0, std::expm1(static_cast<double>(row[kGpus])));
  double rank = gittins_rank_s(median_s, row[kLogSpread], run_s) * gpus / 3600;  // GPU-hours
  if (row[kRunning] > 0.5f) rank *= kGittinsRunningCredit;
  const double level = std::log1p(std::min(rank, 1e12));
  return std::isfinite(level) ? static_cast<float>(level) : 0.f;
}

float second_prior(std::uint32_t preemptive, std::span<const float> row) {
  return preemptive == kPreemptGittins ? gittins_level(row) : las_level(row);
}

void order_prior_terms(std::uint32_t preemptive, std::span<const float> rows, std::size_t n, std::vector<float>& qssf,
                       std::vector<float>& second) {
  qssf.resize(n);
  second.resize(n);
  for (std::size_t i = 0; i < n && (i + 1) * kJobFeatures <= rows.size(); ++i) {
    const std::span<const float> row = rows.subspan(i * kJobFeatures, kJobFeatures);
    qssf[i] = row[kJobRemainingGpuHours];
    second[i] = second_prior(preemptive, row);
  }
}

void add_blended_order_prior(std::uint32_t preemptive, std::span<const float> rows, std::span<float> scores,
                             double weight, float gate) {
  for (std::size_t i = 0; i < scores.size() && (i + 1) * kJobFeatures <= rows.size(); ++i) {
    const std::span<const float> row = rows.subspan(i * kJobFeatures, kJobFeatures);
    const float blend = (1.f - gate) * row[kJobRemainingGpuHours] + gate * second_prior(preemptive, row);
    scores[i] -= static_cast<float>(weight) * blend;
  }
}

std::uint32_t preemptive_prior(std::string_view name) {
  if (name == "las") return kPreemptLas;
  if (name == "gittins") return kPreemptGittins;
  throw std::invalid_argument("unknown preemptive prior '" + std::string(name) + "': expected las or gittins");
}

const char* preemptive_prior_name(std::uint32_t preemptive) {
  return preemptive == kPreemptGittins ? "gittins" : preemptive == kPreemptLas ? "las" : "none";
}

std::string preemptive_flags(std::uint32_t preemptive) {
  if (!preemptive) return "";
  return preemptive == kPreemptGittins ? " --preemptive --prior gittins" : " --preemptive";
}

void add_model_order_prior(const NetConfig& nets, std::span<const float> rows, std::span<float> scores, double weight,
                           float gate) {
  if (nets.ordering.preemptive)
    add_blended_order_prior(nets.ordering.preemptive, rows, scores, weight, gate);
  else
    add_order_prior(rows, scores, weight);
}

}  // namespace duet::learn
