// What keeps the workers' parameters identical (workers.h): every worker
// starts from worker 0's weights and steps with the same averaged gradients.
// Internal to the trainer.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "policy/learn/train/workers.h"

namespace duet::learn {

// Replaces each parameter's gradient by its mean over the workers that had a
// loss this step (`contributed`; a worker whose episode gave no loss terms
// joins with nothing). A parameter no such worker has a gradient for is left
// without one on every worker. Returns whether any worker had a loss (no
// step otherwise). Alone (g null or one worker): returns `contributed` and
// touches nothing, so one worker trains exactly as before workers existed.
bool average_grads(WorkerGroup* g, const std::vector<torch::Tensor>& params, bool contributed);

// Every worker takes worker 0's values of `params`.
void broadcast_params(WorkerGroup* g, const std::vector<torch::Tensor>& params);

}  // namespace duet::learn
