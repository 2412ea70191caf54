// Hyper-parameters of the machine-performance GP (see duet-model(5)).
#pragma once

#include <cstdint>
#include <vector>

#include "policy/learn/gp/machine_graph.h"

namespace duet::learn {

class ByteWriter;
class ByteReader;

// Which machine kernel the GP uses; `none` is the "no GP" ablation (prior
// mean and variance everywhere, observations only counted).
enum class KernelKind : std::uint8_t { random_walk = 0, rbf = 1, none = 2 };

const char* kernel_kind_name(KernelKind k);

struct GpHyper {
  KernelKind kind = KernelKind::random_walk;
  // Random walk kernel: S = (1 - beta) I + beta Â, beta in (0, 0.5] keeps S PSD;
  // K_m = normdiag(sum_p w_p S^p), p = 0..walk_weights.size()-1, w_p >= 0.
  double beta = 0.25;
  std::vector<double> walk_weights = {0.25, 0.25, 0.25, 0.25};
  GraphWeights graph;
  // RBF kernel on MachineDesc::features: exp(-|xi - xj|^2 / (2 l^2)).
  double lengthscale = 1.0;
  // Shared by all kernels. Units: log(measured speed / expected speed).
  double signal_var = 0.01;   // sigma_f^2: prior variance of f
  double noise_var = 0.0025;  // sigma_n^2: per-observation fluctuation
  double type_corr = 0.5;     // rho: correlation of f between two job types
  double prior_mean = 0.0;    // mu_0
  // Learned similarity edges (random walk only).
  std::uint32_t sim_k = 8;        // nearest neighbours per machine
  double sim_lengthscale = 0.05;  // l in exp(-d^2 / 2 l^2), log-speed units
  std::uint32_t sim_min_obs = 3;  // observations before a machine gets edges

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

void write_hyper(ByteWriter& w, const GpHyper& h);
GpHyper read_hyper(ByteReader& r);  // validates; FormatError on bad values

}  // namespace duet::learn
