#include "policy/learn/gp/machine_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace duet::learn {

namespace {
constexpr std::uint32_t kNoRack = UINT32_MAX;
}

MachineGraph::MachineGraph(const std::vector<MachineDesc>& machines, GraphWeights w) : w_(w) {
  std::unordered_map<std::string, std::uint32_t> types, racks;
  type_of_.resize(machines.size());
  rack_of_.resize(machines.size());
  for (std::size_t i = 0; i < machines.size(); ++i) {
    auto t = types.emplace(machines[i].gpu_type, types.size()).first->second;
    type_of_[i] = t;
    if (machines[i].rack.empty()) {
      rack_of_[i] = kNoRack;
    } else {
      rack_of_[i] = racks.emplace(machines[i].rack, racks.size()).first->second;
    }
  }
  n_types_ = static_cast<std::uint32_t>(types.size());
  n_racks_ = static_cast<std::uint32_t>(racks.size());
  type_count_.assign(n_types_, 0);
  rack_count_.assign(n_racks_, 0);
  for (std::size_t i = 0; i < size(); ++i) {
    ++type_count_[type_of_[i]];
    if (rack_of_[i] != kNoRack) ++rack_count_[rack_of_[i]];
  }
  sim_ptr_.assign(size() + 1, 0);
  update_degrees();
}

void MachineGraph::set_weights(GraphWeights w) {
  if (!(w.same_type >= 0 && w.same_rack >= 0 && w.similarity >= 0))
    throw std::invalid_argument("graph weights must be >= 0");
  w_ = w;
  update_degrees();
}

void MachineGraph::update_degrees() {
  inv_sqrt_deg_.resize(static_cast<Eigen::Index>(size()));
  for (std::size_t i = 0; i < size(); ++i) {
    // self-loop 1; the type clique includes i itself (diagonal w_type), same for rack
    double d = 1.0 + w_.same_type * type_count_[type_of_[i]];
    if (rack_of_[i] != kNoRack) d += w_.same_rack * rack_count_[rack_of_[i]];
    for (auto e = sim_ptr_[i]; e < sim_ptr_[i + 1]; ++e) d += w_.similarity * sim_w_[e];
    inv_sqrt_deg_[static_cast<Eigen::Index>(i)] = 1.0 / std::sqrt(d);
  }
}

void MachineGraph::set_similarity(const Eigen::MatrixXd& emb, const std::vector<bool>& valid, int k,
                                  double lengthscale) {
  const std::size_t n = size();
  if (static_cast<std::size_t>(emb.rows()) != n || valid.size() != n)
    throw std::invalid_argument("similarity embedding must have one row per machine");
  if (k < 0 || !(lengthscale > 0)) throw std::invalid_argument("similarity k >= 0 and lengthscale > 0");
  std::vector<std::map<std::uint32_t, double>> adj(n);
  std::vector<std::pair<double, std::uint32_t>> cand;
  for (std::size_t i = 0; i < n; ++i) {
    if (!valid[i] || k == 0) continue;
    cand.clear();
    for (std::size_t j = 0; j < n; ++j)
      if (j != i && valid[j]) cand.emplace_back((emb.row(i) - emb.row(j)).squaredNorm(), j);
    const std::size_t kk = std::min<std::size_t>(static_cast<std::size_t>(k), cand.size());
    std::partial_sort(cand.begin(), cand.begin() + kk, cand.end());
    for (std::size_t c = 0; c < kk; ++c) {
      double wgt = std::exp(-cand[c].first / (2 * lengthscale * lengthscale));
      auto j = cand[c].second;
      adj[i][j] = std::max(adj[i][j], wgt);
      adj[j][static_cast<std::uint32_t>(i)] = std::max(adj[j][static_cast<std::uint32_t>(i)], wgt);
    }
  }
  sim_ptr_.assign(n + 1, 0);
  sim_idx_.clear();
  sim_w_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    for (auto& [j, wgt] : adj[i]) {
      sim_idx_.push_back(j);
      sim_w_.push_back(wgt);
    }
    sim_ptr_[i + 1] = static_cast<std::uint32_t>(sim_idx_.size());
  }
  sim_edges_ = sim_idx_.size() / 2;
  update_degrees();
}

void MachineGraph::apply_normalised(const Eigen::MatrixXd& in, Eigen::MatrixXd& out) const {
  const std::size_t n = size();
  out.resize(in.rows(), in.cols());
  std::vector<double> u(n), tsum(n_types_), rsum(n_racks_);
  const double* isd = inv_sqrt_deg_.data();
  // column by column: every access below is contiguous
  for (Eigen::Index c = 0; c < in.cols(); ++c) {
    const double* x = in.col(c).data();
    double* y = out.col(c).data();
    std::fill(tsum.begin(), tsum.end(), 0.0);
    std::fill(rsum.begin(), rsum.end(), 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = isd[i] * x[i];
      tsum[type_of_[i]] += u[i];
      if (rack_of_[i] != kNoRack) rsum[rack_of_[i]] += u[i];
    }
    for (std::size_t i = 0; i < n; ++i) {
      double v = u[i] + w_.same_type * tsum[type_of_[i]];
      if (rack_of_[i] != kNoRack) v += w_.same_rack * rsum[rack_of_[i]];
      for (auto e = sim_ptr_[i]; e < sim_ptr_[i + 1]; ++e) v += w_.similarity * sim_w_[e] * u[sim_idx_[e]];
      y[i] = isd[i] * v;
    }
  }
}

Eigen::MatrixXd MachineGraph::dense_adjacency() const {
  const auto n = static_cast<Eigen::Index>(size());
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto si = static_cast<std::size_t>(i);
    for (Eigen::Index j = 0; j < n; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      if (type_of_[si] == type_of_[sj]) a(i, j) += w_.same_type;
      if (rack_of_[si] != kNoRack && rack_of_[si] == rack_of_[sj]) a(i, j) += w_.same_rack;
    }
    for (auto e = sim_ptr_[si]; e < sim_ptr_[si + 1]; ++e) a(i, sim_idx_[e]) += w_.similarity * sim_w_[e];
  }
  return a;
}

}  // namespace duet::learn
