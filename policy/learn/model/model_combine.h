// One model from the agents of two: the ordering agent of one model file and
// the placement agent of another (the ablation "independently trained
// agents": duet train --agents order / --agents place, then combined).
#pragma once

#include "policy/learn/model/model_file.h"

namespace duet::learn {

// Ordering network, job and cluster normalisation and the critic from
// `order_from`; placement head, machine normalisation, GP hyper-parameters
// and job-type vocabulary from `place_from`. Throws std::invalid_argument if
// the two declare different network sizes (their weights would not fit).
Model combine_agents(const Model& order_from, const Model& place_from);

}  // namespace duet::learn
