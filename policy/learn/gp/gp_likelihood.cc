#include "policy/learn/gp/gp_likelihood.h"

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <numbers>
#include <unordered_map>

#include "policy/learn/gp/performance_gp.h"

namespace duet::learn {

double log_marginal_likelihood(const MachineKernel& k, const GpHyper& h, std::span<const GpObservation> obs) {
  const auto n = static_cast<Eigen::Index>(obs.size());
  if (n == 0) return 0.0;
  std::unordered_map<std::uint32_t, std::uint32_t> pos;
  std::vector<std::uint32_t> idx;
  std::vector<std::uint32_t> at(obs.size());
  for (std::size_t a = 0; a < obs.size(); ++a) {
    auto [it, fresh] = pos.emplace(obs[a].machine, static_cast<std::uint32_t>(idx.size()));
    if (fresh) idx.push_back(obs[a].machine);
    at[a] = it->second;
  }
  const Eigen::MatrixXd km = k.submatrix(idx);
  Eigen::MatrixXd kxx(n, n);
  Eigen::VectorXd r(n);
  for (Eigen::Index a = 0; a < n; ++a) {
    const auto sa = static_cast<std::size_t>(a);
    for (Eigen::Index b = 0; b < n; ++b) {
      const auto sb = static_cast<std::size_t>(b);
      double t = obs[sa].job_type == obs[sb].job_type ? 1.0 : h.type_corr;
      kxx(a, b) = h.signal_var * km(at[sa], at[sb]) * t;
    }
    r[a] = obs[sa].value - h.prior_mean;
  }
  kxx.diagonal().array() += h.noise_var;
  Eigen::LLT<Eigen::MatrixXd> llt(kxx);
  if (llt.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const Eigen::VectorXd z = llt.matrixL().solve(r);
  const double logdet = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
  const double v =
      -0.5 * z.squaredNorm() - 0.5 * logdet - 0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
  return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity();
}

}  // namespace duet::learn
