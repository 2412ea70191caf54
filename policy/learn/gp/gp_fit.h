// Hyper-parameter fitting of the performance GP by maximising the log
// marginal likelihood with Nelder-Mead in an unconstrained parametrisation.
#pragma once

#include <cstddef>
#include <span>

#include "policy/learn/gp/gp_hyper.h"

namespace duet::learn {

class PerformanceGp;
struct GpObservation;

struct FitOptions {
  std::size_t max_obs = 400;      // use the most recent max_obs observations
  std::size_t max_evals = 300;    // likelihood evaluations
  double tolerance = 1e-6;        // stop when the simplex spread in LML is below
  bool fit_graph_weights = true;  // random walk: also fit w_type, w_rack, w_sim
};

struct FitResult {
  GpHyper hyper;
  double lml_start = 0;
  double lml_best = 0;
  std::size_t evals = 0;
};

// Fits the hyper-parameters of gp's kernel kind on obs (job types as given to
// PerformanceGp::observe) over gp's machines and graph (including its
// learned-similarity edges). Does not modify gp; call gp.set_hyper(result.hyper).
// Kind none has nothing to fit: returns the current hyper-parameters.
FitResult fit_hyper(const PerformanceGp& gp, std::span<const GpObservation> obs, const FitOptions& opt = {});

}  // namespace duet::learn
