#include "policy/learn/agents/placement_head.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace duet::learn {

namespace {
Eigen::MatrixXf matrix(const NamedArray& a) {  // row-major [out, in] -> Eigen
  return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      a.data.data(), a.shape[0], a.shape[1]);
}
Eigen::VectorXf vec(const NamedArray& a) {
  return Eigen::Map<const Eigen::VectorXf>(a.data.data(), static_cast<Eigen::Index>(a.data.size()));
}
}  // namespace

PlacementHead::PlacementHead(const Model& m) {
  const auto f = static_cast<Eigen::Index>(m.nets.placement.machine_features);
  Eigen::MatrixXf w1 = matrix(m.weight("placement.l1.weight"));
  if (w1.cols() != f + m.nets.ordering.order_message)
    throw std::invalid_argument("placement.l1.weight has the wrong shape");
  w1x_ = w1.leftCols(f);
  w1m_ = w1.rightCols(w1.cols() - f);
  b1_ = vec(m.weight("placement.l1.bias"));
  w2_ = vec(m.weight("placement.l2.weight"));
  b2_ = m.weight("placement.l2.bias").data.at(0);
  wm_ = matrix(m.weight("placement.msg.weight"));
  bm_ = vec(m.weight("placement.msg.bias"));
  mean_ = Eigen::Map<const Eigen::RowVectorXf>(m.machine_norm.mean.data(), f);
  scale_ = Eigen::Map<const Eigen::RowVectorXf>(m.machine_norm.scale.data(), f);
}

PlacementHead::RowMat PlacementHead::hidden(std::span<const float> rows, std::size_t k,
                                            std::span<const float> order_msg) const {
  const auto f = w1x_.cols();
  if (rows.size() != k * static_cast<std::size_t>(f))
    throw std::invalid_argument("placement head: " + std::to_string(rows.size()) + " feature values for " +
                                std::to_string(k) + " machines x " + std::to_string(f) + " features");
  if (!order_msg.empty() && order_msg.size() != static_cast<std::size_t>(w1m_.cols()))
    throw std::invalid_argument("placement head: ordering message has " + std::to_string(order_msg.size()) +
                                " values, expected " + std::to_string(w1m_.cols()));
  Eigen::Map<const RowMat> x(rows.data(), static_cast<Eigen::Index>(k), f);
  // the message is the same for every machine: fold it into the bias
  Eigen::VectorXf bias = b1_;
  if (!order_msg.empty()) bias += w1m_ * Eigen::Map<const Eigen::VectorXf>(order_msg.data(), w1m_.cols());
  RowMat xn = (x.rowwise() - mean_).array().rowwise() * scale_.array();
  RowMat h = xn * w1x_.transpose();
  h.rowwise() += bias.transpose();
  return h.cwiseMax(0.0f);
}

void PlacementHead::score(std::span<const float> rows, std::size_t k, std::span<const float> order_msg,
                          std::vector<float>& scores) const {
  RowMat h = hidden(rows, k, order_msg);
  scores.resize(k);
  Eigen::Map<Eigen::VectorXf>(scores.data(), static_cast<Eigen::Index>(k)) = (h * w2_).array() + b2_;
}

void PlacementHead::message(std::span<const float> rows, std::size_t k, std::vector<float>& out) const {
  const auto hw = w2_.size();
  Eigen::VectorXf pooled = Eigen::VectorXf::Zero(2 * hw);
  if (k > 0) {
    RowMat h = hidden(rows, k, {});
    pooled.head(hw) = h.colwise().mean().transpose();
    pooled.tail(hw) = h.colwise().maxCoeff().transpose();
  }
  Eigen::VectorXf m = (wm_ * pooled + bm_).array().tanh();
  out.assign(m.data(), m.data() + m.size());
}

void PlacementHead::rank(std::span<const float> scores, std::vector<std::uint32_t>& order, std::size_t top_k) {
  order.resize(scores.size());
  std::iota(order.begin(), order.end(), 0u);
  auto better = [&](std::uint32_t a, std::uint32_t b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  };
  if (top_k < order.size())
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top_k), order.end(), better);
  else
    std::sort(order.begin(), order.end(), better);
}

}  // namespace duet::learn
