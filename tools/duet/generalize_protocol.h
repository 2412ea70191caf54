// duet eval --protocol generalize: leave one source out (duet-eval(1),
// "GENERALIZE"). For each workload preset and each cluster family of the
// scenario generator (duet-scenario(1)) a model is trained, with the trainer
// of duet train, on scenarios drawn from the other presets only, once per
// training seed; it is then evaluated on scenarios of the held-out preset
// against every non-oracle baseline pair. The plan (which scenarios train and
// which evaluate) is separate from running it so that it can be checked.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "policy/learn/model/spread_sets.h"
#include "policy/registry/policy_registry.h"

namespace duet::cli {

// How much to train and evaluate. A budget name sets every field; a field
// given on the command line then replaces the budget's.
struct GeneralizeBudget {
  int train_scenarios = 4;   // drawn per training seed; trained on one after another
  int episodes = 2;          // PPO episodes on each training scenario
  int eval_scenarios = 4;    // of the held-out preset
  int jobs = 800;            // per scenario
  std::size_t window = 400;  // jobs per training episode
};
// "small" (about an hour on two cores for every source) or "full"; throws
// std::invalid_argument naming both.
GeneralizeBudget generalize_budget(const std::string& name);

struct GeneralizeArgs {
  std::vector<std::string> sources;       // held out, one after another; empty = every family and workload
  std::vector<std::string> families;      // the distribution; empty = every cluster family
  std::vector<std::string> workloads;     // the distribution; empty = every workload preset
  std::vector<uint64_t> seeds = {1, 2, 3};  // training seeds
  GeneralizeBudget budget;
  double load = 0.9;        // offered load of every scenario
  double fee_lambda = 0.1;  // as the shipped model's recipe
  std::string policies;     // baseline pairs; "" = the philly protocol's, oracles left out
  std::string throughputs, prices, philly, pai;  // "" = installed copies
  std::string out;
  double period = 300;
  bool messages = true;
  // The models trained are preemptive (duet train --preemptive): kPreemptLas
  // or kPreemptGittins (--prior), 0 = not.
  std::uint32_t preemptive = 0;
  // Which machines a job no machine holds alone is spread over (duet train
  // --spread-sets): the models keep it, so duet/duet's runs follow it.
  learn::SpreadSets spread = learn::SpreadSets::fastest;
};

// One scenario: the presets applied and the generator's seed.
struct ScenarioDraw {
  std::string family, workload;
  uint64_t seed = 0;
};

struct HeldOutPlan {
  std::string source;
  bool is_family = false;  // else a workload preset
  std::vector<ScenarioDraw> eval;
  std::map<uint64_t, std::vector<ScenarioDraw>> train;  // per training seed, in training order
};

// Which scenarios train and evaluate for each held-out source; throws
// std::invalid_argument for an unknown preset or a source that would leave
// nothing to train on. Deterministic.
std::vector<HeldOutPlan> plan_generalize(const GeneralizeArgs& a);

// The baseline pairs duet/duet is compared with: --policies, else the philly
// protocol's with each placement's "-wait" variant where it has one; oracles
// left out. std::invalid_argument when none is left.
std::vector<std::pair<std::string, std::string>> generalize_baseline_pairs(const GeneralizeArgs& a);

// What one simulation gave.
struct RunMetrics {
  double jct_h = 0, fees_usd = 0;
};

struct HeldOutResult {
  HeldOutPlan plan;
  std::vector<std::string> eval_lines;      // one description per eval scenario
  std::vector<std::string> baselines;       // ORDER/PLACE
  std::vector<std::vector<RunMetrics>> base;  // [baseline][eval scenario]
  std::map<uint64_t, std::vector<RunMetrics>> duet;  // [training seed][eval scenario]
  double train_wall_s = 0;
};

// What the report reads off a result: the best baseline (lowest geometric
// mean JCT over the eval scenarios) and duet/duet's ratios to it per seed
// (geometric means over the scenarios of the per-scenario ratios).
struct HeldOutSummary {
  std::string best;
  double best_mean_jct_h = 0;  // arithmetic mean over the eval scenarios
  std::map<uint64_t, double> jct_ratio, fee_ratio;
  uint64_t median_seed = 0;  // the seed whose JCT ratio is the median (upper of two)
  double median_jct_h = 0;   // that seed's mean JCT over the eval scenarios
};
HeldOutSummary summarize(const HeldOutResult& r);

// Runs the protocol: OUT/summary.md (rewritten after each source),
// OUT/summary.json and OUT/SOURCE/ (the eval scenarios, the training
// scenarios' list, the models). Progress on stderr.
std::vector<HeldOutResult> run_generalize(const GeneralizeArgs& a);

// The markdown and JSON reports of results so far.
void write_generalize_md(const std::string& path, const GeneralizeArgs& a, const std::vector<HeldOutResult>& rs);
void write_generalize_json(const std::string& path, const GeneralizeArgs& a, const std::vector<HeldOutResult>& rs);

}  // namespace duet::cli
