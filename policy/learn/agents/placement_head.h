// The placement agent's scoring head, evaluated in plain C++ (Eigen, no
// LibTorch) so the Slurm select plugin can rank machines cheaply. The same
// network exists as a LibTorch module for training (nets_torch.h); both read
// the "placement.*" weights of the model file.
//
//   h_m   = relu(W1 [x_m ; msg_o] + b1)     x_m: normalised machine features
//   s_m   = w2 . h_m + b2                    one score per candidate machine
//   msg_p = tanh(Wm [mean_m h_m ; max_m h_m] + bm)   with msg_o = 0
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/learn/model/model_file.h"

namespace duet::learn {

class PlacementHead {
 public:
  explicit PlacementHead(const Model& m);  // m must be valid (load_model checks)

  std::uint32_t machine_features() const { return static_cast<std::uint32_t>(w1x_.cols()); }
  std::uint32_t order_message() const { return static_cast<std::uint32_t>(w1m_.cols()); }
  std::uint32_t placement_message() const { return static_cast<std::uint32_t>(bm_.size()); }

  // rows: k raw feature rows (row-major, machine_features() each);
  // order_msg: the ordering agent's message for this job (order_message()
  // floats, or empty for zeros). Thread-safe (const, no shared scratch).
  void score(std::span<const float> rows, std::size_t k, std::span<const float> order_msg,
             std::vector<float>& scores) const;
  // The placement agent's message to the ordering agent: a summary of the
  // cluster as this head sees it (rows built for a generic 1-GPU job).
  void message(std::span<const float> rows, std::size_t k, std::vector<float>& out) const;

  // Indices sorted by descending score; ties keep the lower index first.
  // Only the first top_k positions are ordered (all by default).
  static void rank(std::span<const float> scores, std::vector<std::uint32_t>& order, std::size_t top_k = SIZE_MAX);

 private:
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMat hidden(std::span<const float> rows, std::size_t k, std::span<const float> order_msg) const;
  Eigen::MatrixXf w1x_, w1m_, wm_;
  Eigen::VectorXf b1_, w2_, bm_;
  float b2_ = 0;
  Eigen::RowVectorXf mean_, scale_;
};

}  // namespace duet::learn
