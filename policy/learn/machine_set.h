// Candidate machines for a job that no single machine can hold.
//
// A job spread over machines runs at the speed of its slowest part (the
// simulator's performance model; data-parallel training waits for its
// slowest worker every step), so one slow machine in the set drags all its
// GPUs down. Scoring machines one by one ignores that: on a cluster of many
// 1-GPU T4s beside 4-GPU X100s, an 8-GPU job got X100, V100, T4 and K80 GPUs
// and ran at the K80's speed, 30x its duration. The simulator's "duet"
// placement narrows the candidates with this first. The trainer's rollouts do
// not yet: models/duet.model was trained without it and still reproduces
// bit for bit (models/README.md); the next model should be trained with it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/core/policy.h"

namespace duet::learn {

// Keeps (in their order) the candidates whose speed is at least the highest
// floor that still leaves `gpus` free GPUs among them.
void keep_fastest_floor(std::span<const MachineView> machines, int gpus, std::vector<std::uint32_t>& cand);

}  // namespace duet::learn
