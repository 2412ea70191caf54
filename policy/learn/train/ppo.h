// The updates: behaviour cloning towards a heuristic (warm start) and PPO
// with GAE over one episode's passes. Internal to the trainer.
#pragma once

#include <torch/torch.h>

#include "policy/learn/train/actors.h"
#include "policy/learn/train/rollout.h"
#include "policy/learn/train/trainer.h"

namespace duet::learn {

// Gradient passes towards the heuristic's labels on the recorded states:
// shortest predicted remaining GPU-time first, best-fit placement. Returns
// the last loss.
double bc_update(Nets& n, torch::optim::Optimizer& opt, const Episode& e, const NetConfig& nc, int epochs,
                 TrainAgents agents, bool messages);

// o.ppo_epochs clipped PPO passes over episode e (its advantages and
// returns are filled in). ret_scale: the critic's return scale, set from
// the first episode (<= 0: not yet). Returns the last loss.
double ppo_update(Nets& n, torch::optim::Optimizer& opt, Episode& e, const NetConfig& nc, const TrainOptions& o,
                  double& ret_scale);

}  // namespace duet::learn
