// The updates: behaviour cloning towards a heuristic (warm start) and PPO
// with GAE over one episode's passes. Internal to the trainer.
#pragma once

#include <torch/torch.h>

#include "policy/learn/train/actors.h"
#include "policy/learn/train/rollout.h"
#include "policy/learn/train/trainer.h"

namespace duet::learn {

// With several workers (o.workers, workers.h) every gradient pass of an
// update averages the workers' gradients (grad_sync.h) before the optimiser
// steps; every worker calls the update once per episode.

// Gradient passes towards the heuristic's labels on the recorded states:
// shortest predicted remaining GPU-time first, best-fit placement. Each
// epoch uses at most max_passes passes (0: all), drawn with `seed`.
// Returns the last loss.
double bc_update(Nets& n, torch::optim::Optimizer& opt, const Episode& e, const NetConfig& nc,
                 const TrainOptions& o, int max_passes, std::uint64_t seed);

// o.ppo_epochs clipped PPO passes over episode e (its advantages and
// returns are filled in from all of its passes; each epoch's loss uses at
// most max_passes of them (0: all), drawn with `seed`). ret_scale: the
// critic's return scale, set from the first episode (<= 0: not yet; with
// workers, their mean).
// Returns the last loss.
double ppo_update(Nets& n, torch::optim::Optimizer& opt, Episode& e, const NetConfig& nc, const TrainOptions& o,
                  int max_passes, double& ret_scale, std::uint64_t seed);

}  // namespace duet::learn
