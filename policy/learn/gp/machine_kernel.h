// Machine kernels of the performance GP: unit-diagonal correlation matrices
// over machines. Columns are computed on demand (never the dense M x M matrix).
// RandomWalkKernel fills a normalisation cache on its first columns() call:
// do not call it from two threads at once.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "policy/learn/gp/gp_hyper.h"
#include "policy/learn/gp/machine_graph.h"

namespace duet::learn {

class MachineKernel {
 public:
  virtual ~MachineKernel() = default;
  virtual std::size_t size() const = 0;
  // out(:, c) = K(:, cols[c]) for every machine.
  virtual void columns(const std::vector<std::uint32_t>& cols, Eigen::MatrixXd& out) const = 0;
  // K(idx, idx); cheaper than columns() (no full normalisation needed).
  virtual Eigen::MatrixXd submatrix(const std::vector<std::uint32_t>& idx) const = 0;
};

// K = normdiag(sum_p w_p S^p), S = (1 - beta) I + beta Â. Each S^p is PSD
// because eig(S) lies in [1 - 2 beta, 1] >= 0, and w_p >= 0, so the sum is
// PSD; normdiag(X) = diag(X)^-1/2 X diag(X)^-1/2 keeps it PSD and makes the
// prior variance equal on every machine. The graph must outlive the kernel.
class RandomWalkKernel final : public MachineKernel {
 public:
  RandomWalkKernel(const MachineGraph& g, double beta, std::vector<double> walk_weights);
  std::size_t size() const override { return g_.size(); }
  void columns(const std::vector<std::uint32_t>& cols, Eigen::MatrixXd& out) const override;
  Eigen::MatrixXd submatrix(const std::vector<std::uint32_t>& idx) const override;
  // Unnormalised sum_p w_p S^p applied to the unit vectors of cols.
  Eigen::MatrixXd raw_columns(const std::vector<std::uint32_t>& cols) const;

 private:
  const Eigen::VectorXd& inv_sqrt_diag() const;  // computed once, lazily
  const MachineGraph& g_;
  double beta_;
  std::vector<double> w_;
  mutable Eigen::VectorXd inv_sqrt_diag_;
};

// K(i, j) = exp(-|x_i - x_j|^2 / (2 l^2)) on MachineDesc::features.
class RbfKernel final : public MachineKernel {
 public:
  RbfKernel(const std::vector<MachineDesc>& machines, double lengthscale);
  std::size_t size() const override { return static_cast<std::size_t>(x_.rows()); }
  void columns(const std::vector<std::uint32_t>& cols, Eigen::MatrixXd& out) const override;
  Eigen::MatrixXd submatrix(const std::vector<std::uint32_t>& idx) const override;

 private:
  Eigen::MatrixXd x_;  // M x features
  double inv_2l2_;
};

// The kernel that `h.kind` names, over `g` (random walk) or the descriptors
// (rbf); nullptr for KernelKind::none.
std::unique_ptr<MachineKernel> make_machine_kernel(const GpHyper& h, const MachineGraph& g,
                                                   const std::vector<MachineDesc>& machines);

}  // namespace duet::learn
