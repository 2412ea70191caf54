// Machine speed variability fitted to the Alibaba mini-batch data.
//
// Persistent factor: a machine's speed s_m = exp(N(0, speed_sigma^2)), clipped
// to [0.5, 1.5]. speed_sigma = median over the jobs of the standard deviation of
// log(median worker mean time / worker mean time) (the median resists job 4,
// whose fractional-GPU workers differ 5x).
// Fluctuation: f_m(t) = exp(x_m(t)), x an AR(1) process stepped once per
// fluctuation period: x' = phi x + sqrt(1 - phi^2) ar_sigma N(0,1), started from
// its stationary law N(0, ar_sigma^2). phi and ar_sigma = medians over jobs of
// the lag-1 autocorrelation and the standard deviation of log(time / worker
// mean) (consecutive samples are 10 iterations apart; one sample step is taken
// as one fluctuation period, an assumption).
#pragma once

#include <vector>

#include "policy/io/minibatch.h"

namespace duet {

struct Variability {
  double speed_sigma = 0;
  double ar_phi = 0;
  double ar_sigma = 0;
};

// The numbers fitted to data/alibaba-minibatch/job_[1-4]_norm.csv
// (check_model re-fits them from the data and compares).
inline constexpr Variability kFittedVariability{0.0634, 0.780, 0.0580};

Variability fit_variability(const std::vector<MinibatchJob>& jobs);

}  // namespace duet
