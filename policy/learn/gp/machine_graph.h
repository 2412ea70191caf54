// The machine graph of the Random Walk GP: machines are nodes; edges join
// machines expected to perform alike.
//
//   A = I + w_type * [same GPU type] + w_rack * [same rack] + w_sim * G
//
// I is a unit self-loop (so an isolated machine is well defined), the two
// indicator terms are cliques (never materialised: applied through group sums)
// and G is a sparse symmetric k-nearest-neighbour graph over machine
// embeddings learned from observed performance (weights exp(-d^2 / 2l^2)).
// Â = D^-1/2 A D^-1/2 with D = diag(A 1); its eigenvalues lie in [-1, 1].
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace duet::learn {

// One machine as the GP sees it. Plain data; the caller fills it from the
// cluster description (simulator or Slurm node table).
struct MachineDesc {
  std::string name;              // unique; used to remap saved GP state
  std::string gpu_type;          // e.g. "V100"; any string, unknown types fine
  std::string rack;              // empty: no rack edges for this machine
  std::vector<double> features;  // for the RBF variant (e.g. relative speed)
};

struct GraphWeights {
  double same_type = 1.0;   // w_type
  double same_rack = 0.5;   // w_rack
  double similarity = 1.0;  // w_sim (only matters once similarity edges exist)
};

class MachineGraph {
 public:
  MachineGraph() = default;
  MachineGraph(const std::vector<MachineDesc>& machines, GraphWeights w);

  std::size_t size() const { return type_of_.size(); }
  const GraphWeights& weights() const { return w_; }
  void set_weights(GraphWeights w);

  // Replace the learned-similarity edges: each valid machine (row of emb)
  // links to its k nearest valid machines, weight exp(-|zi-zj|^2 / 2 l^2),
  // symmetrised by taking the larger weight. Invalid rows get no edges.
  void set_similarity(const Eigen::MatrixXd& emb, const std::vector<bool>& valid, int k, double lengthscale);
  std::size_t similarity_edges() const { return sim_edges_; }

  // out = Â * in, for a block of column vectors (size() rows).
  void apply_normalised(const Eigen::MatrixXd& in, Eigen::MatrixXd& out) const;

  // Dense A (tests and small graphs only).
  Eigen::MatrixXd dense_adjacency() const;

 private:
  void update_degrees();
  std::vector<std::uint32_t> type_of_, rack_of_;  // rack_of_ == kNoRack: none
  std::uint32_t n_types_ = 0, n_racks_ = 0;
  std::vector<std::uint32_t> type_count_, rack_count_;
  // CSR sparse similarity graph (symmetric, no diagonal)
  std::vector<std::uint32_t> sim_ptr_, sim_idx_;
  std::vector<double> sim_w_;
  std::size_t sim_edges_ = 0;
  GraphWeights w_;
  Eigen::VectorXd inv_sqrt_deg_;
};

}  // namespace duet::learn
