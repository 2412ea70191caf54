// Candidate machines for a job that no single machine can hold.
//
// A job spread over machines runs at the speed of its slowest part (the
// simulator's performance model; data-parallel training waits for its
// slowest worker every step), so one slow machine in the set drags all its
// GPUs down. Scoring machines one by one ignores that: on a cluster of many
// 1-GPU T4s beside 4-GPU X100s, an 8-GPU job got X100, V100, T4 and K80 GPUs
// and ran at the K80's speed, 30x its duration. The placement routine
// (placement_routine.h) narrows the candidates with this first, for the
// simulator's "duet" placement and the trainer's rollouts; select/duet ranks
// the nodes below the floor last. models/duet.model was trained before the
// trainer did (models/README.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/core/policy.h"

namespace duet::learn {

// Which machines a job that no machine holds alone is spread over. It runs
// at its slowest machine's speed, so faster machines in its set are wasted,
// and they are worth most to the many small jobs (models/README.md).
enum class SpreadSets {
  fastest,  // the fastest machines that hold it (fastest_floor): the model's rule
  tight,    // the same speed floor, the slowest machines at or above it first
  slow,     // the slowest machines: the prior's sign flipped
  learned,  // the scorer's first machine of all decides: above the fastest
            // floor, the fastest rule; at or below it, tight from its speed
};

// "fastest", "tight", "slow", "learned" (duet train --spread-sets; the
// simulator's placement is "duet-NAME-sets", "duet" for fastest), and back;
// parse_spread_sets throws std::invalid_argument naming the known ones.
const char* spread_sets_name(SpreadSets s);
SpreadSets parse_spread_sets(std::string_view name);
std::vector<std::string> spread_sets_names();

// The highest speed such that the candidates at least that fast have `gpus`
// free GPUs together; 0 when one candidate holds the job alone (no set is
// needed) or all of them together cannot.
double fastest_floor(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand);

// Keeps (in their order) the candidates at or above fastest_floor.
void keep_fastest_floor(std::span<const MachineView> machines, int gpus, std::vector<std::uint32_t>& cand);

}  // namespace duet::learn
