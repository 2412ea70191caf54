#include "policy/learn/gp/machine_kernel.h"

#include <cmath>
#include <stdexcept>

namespace duet::learn {

RandomWalkKernel::RandomWalkKernel(const MachineGraph& g, double beta, std::vector<double> w)
    : g_(g), beta_(beta), w_(std::move(w)) {
  double s = 0;
  for (double v : w_) s += v;
  if (!(beta_ > 0 && beta_ <= 0.5) || !(s > 0)) throw std::invalid_argument("random walk kernel: bad beta or weights");
  for (double& v : w_) v /= s;
}

Eigen::MatrixXd RandomWalkKernel::raw_columns(const std::vector<std::uint32_t>& cols) const {
  const auto n = static_cast<Eigen::Index>(g_.size());
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, static_cast<Eigen::Index>(cols.size()));
  for (std::size_t c = 0; c < cols.size(); ++c) {
    if (cols[c] >= g_.size()) throw std::out_of_range("machine index out of range");
    x(cols[c], static_cast<Eigen::Index>(c)) = 1.0;
  }
  Eigen::MatrixXd acc = w_[0] * x, ax;
  for (std::size_t p = 1; p < w_.size(); ++p) {
    g_.apply_normalised(x, ax);
    x = (1.0 - beta_) * x + beta_ * ax;
    acc += w_[p] * x;
  }
  return acc;
}

const Eigen::VectorXd& RandomWalkKernel::inv_sqrt_diag() const {
  if (inv_sqrt_diag_.size() == static_cast<Eigen::Index>(g_.size())) return inv_sqrt_diag_;
  const std::size_t n = g_.size(), block = 64;
  Eigen::VectorXd d(static_cast<Eigen::Index>(n));
  std::vector<std::uint32_t> cols;
  for (std::size_t b = 0; b < n; b += block) {
    cols.clear();
    for (std::size_t i = b; i < std::min(n, b + block); ++i) cols.push_back(static_cast<std::uint32_t>(i));
    Eigen::MatrixXd r = raw_columns(cols);
    for (std::size_t c = 0; c < cols.size(); ++c)
      d[cols[c]] = 1.0 / std::sqrt(r(cols[c], static_cast<Eigen::Index>(c)));
  }
  inv_sqrt_diag_ = std::move(d);
  return inv_sqrt_diag_;
}

void RandomWalkKernel::columns(const std::vector<std::uint32_t>& cols, Eigen::MatrixXd& out) const {
  const Eigen::VectorXd& s = inv_sqrt_diag();
  out = s.asDiagonal() * raw_columns(cols);
  for (std::size_t c = 0; c < cols.size(); ++c) out.col(static_cast<Eigen::Index>(c)) *= s[cols[c]];
}

Eigen::MatrixXd RandomWalkKernel::submatrix(const std::vector<std::uint32_t>& idx) const {
  Eigen::MatrixXd r = raw_columns(idx);
  const auto k = static_cast<Eigen::Index>(idx.size());
  Eigen::MatrixXd out(k, k);
  Eigen::VectorXd s(k);
  // (S^p)_ii is read from machine i's own chain: no full diagonal needed.
  for (Eigen::Index a = 0; a < k; ++a) s[a] = 1.0 / std::sqrt(r(idx[static_cast<std::size_t>(a)], a));
  for (Eigen::Index b = 0; b < k; ++b)
    for (Eigen::Index a = 0; a < k; ++a) out(a, b) = s[a] * s[b] * r(idx[static_cast<std::size_t>(a)], b);
  return 0.5 * (out + out.transpose());  // exact symmetry for Cholesky
}

RbfKernel::RbfKernel(const std::vector<MachineDesc>& machines, double lengthscale) {
  if (!(lengthscale > 0)) throw std::invalid_argument("rbf kernel: lengthscale must be > 0");
  const std::size_t r = machines.empty() ? 0 : machines[0].features.size();
  x_.resize(static_cast<Eigen::Index>(machines.size()), static_cast<Eigen::Index>(r));
  for (std::size_t i = 0; i < machines.size(); ++i) {
    if (machines[i].features.size() != r)
      throw std::invalid_argument("rbf kernel: machine " + machines[i].name + " has " +
                                  std::to_string(machines[i].features.size()) + " features, expected " +
                                  std::to_string(r));
    for (std::size_t f = 0; f < r; ++f)
      x_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(f)) = machines[i].features[f];
  }
  inv_2l2_ = 1.0 / (2 * lengthscale * lengthscale);
}

void RbfKernel::columns(const std::vector<std::uint32_t>& cols, Eigen::MatrixXd& out) const {
  out.resize(x_.rows(), static_cast<Eigen::Index>(cols.size()));
  for (std::size_t c = 0; c < cols.size(); ++c) {
    auto xc = x_.row(cols[c]);
    for (Eigen::Index i = 0; i < x_.rows(); ++i)
      out(i, static_cast<Eigen::Index>(c)) = std::exp(-(x_.row(i) - xc).squaredNorm() * inv_2l2_);
  }
}

Eigen::MatrixXd RbfKernel::submatrix(const std::vector<std::uint32_t>& idx) const {
  const auto k = static_cast<Eigen::Index>(idx.size());
  Eigen::MatrixXd out(k, k);
  for (Eigen::Index a = 0; a < k; ++a)
    for (Eigen::Index b = 0; b < k; ++b)
      out(a, b) = std::exp(
          -(x_.row(idx[static_cast<std::size_t>(a)]) - x_.row(idx[static_cast<std::size_t>(b)])).squaredNorm() *
          inv_2l2_);
  return out;
}

std::unique_ptr<MachineKernel> make_machine_kernel(const GpHyper& h, const MachineGraph& g,
                                                   const std::vector<MachineDesc>& machines) {
  switch (h.kind) {
    case KernelKind::random_walk:
      return std::make_unique<RandomWalkKernel>(g, h.beta, h.walk_weights);
    case KernelKind::rbf:
      return std::make_unique<RbfKernel>(machines, h.lengthscale);
    case KernelKind::none:
      return nullptr;
  }
  return nullptr;
}

}  // namespace duet::learn
