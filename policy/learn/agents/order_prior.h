// The explicit prior under a preemptive ordering model's network score
// (NetConfig::ordering.preemptive). Two priors, blended by a gate g in (0, 1)
// that the network computes from its squeeze context and the cluster summary
// ("ordering.gate", duet-model(5)):
//   score_i = net_i - weight * ((1 - g) * qssf_i + g * second_i)
// qssf_i is the QSSF-like prior of add_order_prior (feature 11, predicted
// remaining GPU-hours); second_i is Tiresias' discretised LAS (las_level,
// kPreemptLas) or the Gittins rank (gittins_level, kPreemptGittins). The
// simulator's agent, priority/duet and the trainer all compute the terms
// with these functions; a model that is not preemptive keeps add_order_prior
// alone. Torch-free.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/learn/model/net_config.h"

namespace duet::learn {

// Tiresias' queues (policy/baselines/dlas.h) on the job features: queue 0
// below 3,250 attained GPU-seconds, 1 below 7,200, 2 above, read from the
// log1p(attained GPU-hours) of feature 5. A running job (feature 7) counts
// half a queue less: inside its queue it stays ahead of a pending job, so
// jobs of one queue do not displace each other every period (each
// preemption costs the restart overhead), as in Tiresias.
inline constexpr float kLasQueueStep = 4.0f;     // prior units per queue
inline constexpr float kLasRunningCredit = 0.5f;  // in queues
float las_level(std::span<const float> row);

// The Gittins rank (policy/util/gittins_index.h) of the job's log-normal
// duration from its history (features 8 and 9: median and log spread), after
// the minutes it has run (feature 6), times its GPUs (feature 0), as
// log1p(GPU-hours per completion): the units of the QSSF-like term. A
// running job (feature 7) counts at kGittinsRunningCredit (gittins_index.h)
// of its rank.
float gittins_level(std::span<const float> row);

// The model's second prior term of one row: las_level or gittins_level.
float second_prior(std::uint32_t preemptive, std::span<const float> row);

// qssf[i] and second[i] of each of the n rows (kJobFeatures floats each).
void order_prior_terms(std::uint32_t preemptive, std::span<const float> rows, std::size_t n, std::vector<float>& qssf,
                       std::vector<float>& second);

// scores[i] -= weight * ((1 - gate) * qssf_i + gate * second_i).
void add_blended_order_prior(std::uint32_t preemptive, std::span<const float> rows, std::span<float> scores,
                             double weight, float gate);

// --prior's names: "las" -> kPreemptLas, "gittins" -> kPreemptGittins;
// std::invalid_argument otherwise.
std::uint32_t preemptive_prior(std::string_view name);
const char* preemptive_prior_name(std::uint32_t preemptive);
// The command-line flags that make such a model: "", " --preemptive" or
// " --preemptive --prior gittins" (provenance and reports).
std::string preemptive_flags(std::uint32_t preemptive);

// The prior of a model's ordering, as every caller adds it: the blend for a
// preemptive model (gate from OrderingAgent::score), else add_order_prior.
void add_model_order_prior(const NetConfig& nets, std::span<const float> rows, std::span<float> scores, double weight,
                           float gate);

// The gate's initial bias (duet model init): sigmoid(2) = 0.88, so an
// untrained preemptive model orders like its second prior (Tiresias' LAS
// with QSSF inside a queue, or mostly the Gittins rank), and training moves
// it from there.
inline constexpr float kLasGateInitBias = 2.0f;

}  // namespace duet::learn
