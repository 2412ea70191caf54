// duet eval --protocol philly: the evaluation protocol of the learned
// scheduler in one invocation (duet-eval(1), "PROTOCOL"). Philly split by
// submit time, PAI clusters sampled with the GPU mix kept and sized to an
// offered load, every pair run for several seeds, mean and spread reported.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "policy/registry/policy_registry.h"

namespace duet::cli {

struct ProtocolArgs {
  std::string philly, pai;                    // "" = the installed data/ copies
  std::string split = "test";                 // train | validate | test
  std::vector<double> loads = {70, 90, 110};  // offered load, % of capacity
  std::vector<uint64_t> seeds = {1, 2, 3};
  std::string policies;             // "" = the protocol's default pairs
  PolicyContext context;            // --model, --no-messages (each run sets its seed)
  std::string throughputs, prices;  // "" = installed copies
  std::string out;
  double period = 300;
  bool no_plots = false;
};

// Runs the protocol and writes OUT/summary.md, OUT/summary.json and, per
// load and seed, OUT/load<L>/seed<S>/ (the cluster CSV and duet eval's files).
void run_protocol(const ProtocolArgs& a);

// Parses "70,90,110" (positive numbers) for --loads; throws naming the option.
std::vector<double> parse_loads(const std::string& s);
std::vector<uint64_t> parse_seeds(const std::string& s);

// The protocol's baseline pairs (no learned policy): every baseline ordering
// with first-fit and fastest-first, QSSF with the other placements,
// gavel-las/type-affinity.
std::vector<std::pair<std::string, std::string>> baseline_protocol_pairs(const PolicyContext& ctx);

}  // namespace duet::cli
