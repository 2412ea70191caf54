// The one table of policies by name: the baselines (policy/baselines) and the
// learned scheduler (policy/learn). It sits above both so that policy/core
// stays the seam alone and neither side depends on the other. Its users are
// the duet command (tools/duet) and the tests; the trainer and the Slurm
// plugins build the policies they need directly, without names.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policy/core/policy.h"

namespace duet::learn {
struct Model;
}

namespace duet {

class ThroughputTable;

// Everything a factory may use; the command fills it from its options.
struct PolicyContext {
  // The learned policies' model (--model); null: none given, and a learned
  // policy then throws naming --model.
  std::shared_ptr<const learn::Model> model;
  uint64_t seed = 1;     // random and learned placement
  bool messages = true;  // learned ordering exchanges messages with a learned placement (--no-messages)
  bool preemption = true;  // a preemptive model's ordering may preempt (--no-preemption)
  // Gavel's per-job-type throughputs for type-affinity; null: it uses the
  // machines' known speeds only. Must outlive the policies built.
  const ThroughputTable* throughputs = nullptr;
};

// Throw std::invalid_argument naming the known policies on an unknown name.
std::unique_ptr<OrderingPolicy> make_ordering(std::string_view name, const PolicyContext& ctx = {});
std::unique_ptr<PlacementPolicy> make_placement(std::string_view name, const PolicyContext& ctx = {});
std::vector<std::string> ordering_names();
std::vector<std::string> placement_names();

// Reads a model file for PolicyContext::model and checks that its inputs fit
// the learned policies; throws FormatError / std::invalid_argument.
std::shared_ptr<const learn::Model> load_policy_model(const std::string& path);

}  // namespace duet
