// Which machines a job that no machine holds alone is spread over: a property
// of a model (format 3, duet-model(5)), chosen when it is trained (duet train
// --spread-sets) and honoured wherever its placement agent runs. The rules
// themselves are policy/learn/agents/machine_set.h and placement_routine.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace duet::learn {

// A job spread over machines runs at its slowest machine's speed, so faster
// machines in its set are wasted, and they are worth most to the many small
// jobs (models/README.md). The values are the model file's.
enum class SpreadSets : std::uint32_t {
  fastest = 0,  // the fastest machines that hold it (fastest_floor)
  tight = 1,    // the same speed floor, the slowest machines at or above it first
  slow = 2,     // the slowest machines: the prior's sign flipped
  learned = 3,  // the scorer's first machine of all decides: above the fastest
                // floor, the fastest rule; at or below it, tight from its speed
};

// "fastest", "tight", "slow", "learned" (duet train --spread-sets; the
// simulator's placement "duet-NAME-sets" overrides a model's rule), and back;
// parse_spread_sets throws std::invalid_argument naming the known ones.
const char* spread_sets_name(SpreadSets s);
SpreadSets parse_spread_sets(std::string_view name);
std::vector<std::string> spread_sets_names();

}  // namespace duet::learn
