// A fresh (untrained) model: random network weights from a seed, identity
// feature normalisation, the given GP hyper-parameters. Implemented with
// LibTorch (libduetlearn_nets.la); the header itself is torch-free.
#pragma once

#include <cstdint>

#include "policy/learn/model/model_file.h"

namespace duet::learn {

Model make_initial_model(const NetConfig& nets, const GpHyper& gp, std::uint64_t seed);

}  // namespace duet::learn
