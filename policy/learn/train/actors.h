// The networks the trainer updates (both actors and the critic) and the
// ordering actor's pass as deployed, shared by the rollouts (rollout.h) and
// the updates (ppo.h). LibTorch; internal to the trainer.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/nets_torch.h"
#include "policy/learn/train/trainer.h"

namespace duet::learn {

inline bool trains_order(TrainAgents a) { return a != TrainAgents::place; }
inline bool trains_place(TrainAgents a) { return a != TrainAgents::order; }

struct Nets {
  OrderingNet ord;
  PlacementNet plc;
  CriticNet critic;
  explicit Nets(const NetConfig& c) : ord(c), plc(c), critic(c) {}
  // With the weights of a model file.
  explicit Nets(const Model& m) : Nets(m.nets) { load(m); }
  void load(const Model& m);
  // What the optimiser updates: the trained actors and the critic.
  std::vector<torch::Tensor> params(TrainAgents a);
};

// `base` with the networks' current weights and the given provenance.
Model export_model(Nets& n, const Model& base, const std::string& provenance);

// n x f floats, row-major, as a tensor (copied).
torch::Tensor rows_tensor(const std::vector<float>& rows, std::int64_t n, std::int64_t f);

// One ordering pass as deployed (DuetOrdering): the placement head's message
// about the machines goes into the ordering scores, on top of the prior;
// the same pass yields each job's message to the placement head. Gradients
// flow through both messages, which is how the agents learn to talk.
struct OrderOut {
  torch::Tensor scores;   // [n] logits (prior included)
  torch::Tensor learned;  // [n] the network's part of them (without the prior)
  torch::Tensor msgs;    // [n, order_message]; zeros without messages
};
// The prior under the network's score, as the deployed agent adds it: a model
// that is not preemptive adds `fixed` (add_order_prior's); a preemptive one
// blends the two terms of order_prior.h with its gate, which is trained.
struct OrderPrior {
  torch::Tensor fixed;      // [n] -weight * feature 11
  torch::Tensor qssf, las;  // [n] order_prior_terms (preemptive models; las: the second term, LAS or Gittins)
  float weight = 0;
};
// The prior of n job rows (kJobFeatures each) for a model's networks.
OrderPrior order_prior(const NetConfig& nc, const torch::Tensor& jobs, const std::vector<float>& rows, double weight);
OrderOut order_pass(Nets& n, const NetConfig& nc, const torch::Tensor& jobs, const torch::Tensor& cluster,
                    const torch::Tensor& machines, const OrderPrior& prior, bool messages);
// The message of the job in input row `row` of an ordering pass; -1: zeros.
torch::Tensor job_msg(const torch::Tensor& msgs, std::int64_t row, const NetConfig& nc);

}  // namespace duet::learn
