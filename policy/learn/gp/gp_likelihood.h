// Log marginal likelihood of observations under a machine kernel and
// hyper-parameters: the objective of hyper-parameter fitting.
#pragma once

#include <span>

#include "policy/learn/gp/gp_hyper.h"
#include "policy/learn/gp/machine_kernel.h"

namespace duet::learn {

struct GpObservation;

// log p(y) = -1/2 r^T K^-1 r - 1/2 log|K| - n/2 log(2 pi), r = y - mu_0,
// K = sigma_f^2 (K_m o K_t) + sigma_n^2 I over the observations. job_type
// values must already be type slots (PerformanceGp::type_slot). Returns -inf
// when K is not numerically positive definite.
double log_marginal_likelihood(const MachineKernel& k, const GpHyper& h, std::span<const GpObservation> obs);

}  // namespace duet::learn
