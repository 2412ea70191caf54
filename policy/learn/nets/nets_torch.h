// LibTorch modules of the learned scheduler, for the trainer and the
// ordering agent. INTERNAL: includes <torch/torch.h>; never include it from a
// header that a Slurm plugin includes (use ordering_agent.h instead).
//
// Parameter names and shapes are those of net_config.h without the
// network prefix ("enc1.weight" here is "ordering.enc1.weight" in the file).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "policy/learn/model/net_config.h"

namespace duet::learn {

// Squeeze-and-communicate ordering network. Inputs are normalised features.
//   E   = relu(enc2(relu(enc1(jobs))))                 [n, embed]
//   ctx = [mean_n E ; max_n E]                          [2 embed]   (squeeze)
//   s_i = head2(relu(head1([E_i ; ctx ; cluster ; msg_p])))          (communicate)
// Cost is linear in n; any n >= 1; permutation equivariant. head1 is applied
// as E W_e^T + (W_g [ctx ; cluster ; msg_p] + b): the shared part once.
struct OrderingNetImpl : torch::nn::Module {
  explicit OrderingNetImpl(const NetConfig& c);
  torch::Tensor embed(const torch::Tensor& jobs) const;  // [n, embed]
  static torch::Tensor squeeze(const torch::Tensor& e);  // [2 embed]
  torch::Tensor scores(const torch::Tensor& e, const torch::Tensor& ctx, const torch::Tensor& cluster,
                       const torch::Tensor& placement_msg) const;                  // [n] logits
  torch::Tensor messages(const torch::Tensor& e, const torch::Tensor& ctx) const;  // [n, order_message]
  torch::Tensor forward(const torch::Tensor& jobs, const torch::Tensor& cluster, const torch::Tensor& placement_msg);
  // Preemptive models: the weight of the second prior (LAS or Gittins) against the QSSF-like one,
  // sigmoid(gate([ctx ; cluster])), a scalar (order_prior.h).
  torch::Tensor gate_value(const torch::Tensor& ctx, const torch::Tensor& cluster) const;

  NetConfig cfg;
  torch::nn::Linear enc1{nullptr}, enc2{nullptr}, head1{nullptr}, head2{nullptr}, msg{nullptr};
  torch::nn::Linear gate{nullptr};  // preemptive models only
};
TORCH_MODULE(OrderingNet);

// Placement head (same maths as PlacementHead in plain C++).
struct PlacementNetImpl : torch::nn::Module {
  explicit PlacementNetImpl(const NetConfig& c);
  // machines [k, machine_features] normalised; order_msg [order_message] -> [k]
  torch::Tensor forward(const torch::Tensor& machines, const torch::Tensor& order_msg);
  torch::Tensor message(const torch::Tensor& machines);  // [placement_message]

  NetConfig cfg;
  torch::nn::Linear l1{nullptr}, l2{nullptr}, msg{nullptr};
};
TORCH_MODULE(PlacementNet);

// Centralised critic for MAPPO: sees both agents' observations.
//   V = v2(relu(v1([mean,max of relu(job(jobs))] ; [mean,max of relu(machine(machines))] ; cluster)))
struct CriticNetImpl : torch::nn::Module {
  explicit CriticNetImpl(const NetConfig& c);
  torch::Tensor forward(const torch::Tensor& jobs, const torch::Tensor& machines, const torch::Tensor& cluster);

  NetConfig cfg;
  torch::nn::Linear job{nullptr}, machine{nullptr}, v1{nullptr}, v2{nullptr};
};
TORCH_MODULE(CriticNet);

// Parameters of `m` as named arrays, names prefixed ("ordering.").
std::vector<NamedArray> export_weights(const torch::nn::Module& m, const std::string& prefix);
// Copies the arrays named prefix + parameter name into m's parameters; throws
// std::invalid_argument naming a missing array or a shape mismatch.
void import_weights(torch::nn::Module& m, const std::string& prefix, const std::vector<NamedArray>& weights);

// One intra-op and one inter-op thread for LibTorch (idempotent).
void use_one_torch_thread();

}  // namespace duet::learn
