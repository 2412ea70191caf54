// Shared pieces of the duet subcommands: the common options, loading the
// inputs, the policies they name, a progress bar on stderr when it is a terminal.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "policy/io/data_files.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"
#include "policy/registry/policy_registry.h"
#include "policy/sim/metrics.h"
#include "policy/sim/simulator.h"

namespace duet::cli {

// Options every simulating command shares.
struct Inputs {
  std::string trace, cluster, throughputs, prices;
  uint64_t seed = 1;
  bool ideal = false, drop_oversized = false;
  double period = 300;
  double restart_overhead = 30;  // --restart-overhead: seconds a preempted job loses when it restarts
  SimOptions::PreemptLimits preempt_limits;  // --preempt-min-run-time etc. (duet.conf's limits)
  std::string model;     // --model: model file for the learned "duet" policies
  bool messages = true;  // off with --no-messages
  bool preemption = true;  // off with --no-preemption
  // required = false: --trace/--cluster may be left out (the caller checks).
  void add_options(CLI::App& app, bool required = true);
};

// The context the named policies are built with: the --model file (read and
// checked here), the seed, --no-messages, --no-preemption. Throws FormatError /
// std::invalid_argument for a model that does not fit.
PolicyContext policy_context(const Inputs& in);

struct Loaded {
  Trace trace;
  ThroughputTable table;
  ClusterModel cluster;
  PriceTable prices;
};
// Reads and checks every input; throws InputError / std::runtime_error.
std::unique_ptr<Loaded> load(const Inputs& in);

// "all" or a comma list of ORDER/PLACE pairs, either side may be '*' (every
// known policy; learned ones only when ctx has a model). Throws naming the item.
std::vector<std::pair<std::string, std::string>> expand_pairs(const std::string& list, const PolicyContext& ctx);

struct RunOptions {
  uint64_t seed = 1;
  bool ideal = false, drop_oversized = false;
  double period_s = 300;
  double restart_overhead_s = 30;
  SimOptions::PreemptLimits preempt_limits;
  std::string progress_label;  // shown in the progress bar
};
// The simulator options of --seed, --ideal, --period, --restart-overhead, the
// preemption limits and --drop-oversized.
RunOptions run_options(const Inputs& in, std::string progress_label);
// Builds the two policies by name (ctx's model and messages, o.seed) and
// simulates them once; *dropped gets the jobs left out as oversized;
// `observer` (may be null) sees every start, preemption and finish.
SimResult run_pair(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                   const PriceTable* prices, const std::string& ordering, const std::string& placement,
                   const PolicyContext& ctx, const RunOptions& o, int64_t* dropped, SimObserver* observer = nullptr);

// Writes `out` through `w` to a temporary file renamed into place ("" or "-":
// stdout); throws std::runtime_error.
void write_to(const std::string& out, const std::function<void(std::ostream&)>& w);

// --prior las|gittins, a preemptive model's second prior (duet-model(5),
// PREEMPTION), given only with `preemptive` (the --preemptive flag).
void add_prior_option(CLI::App* app, std::string& prior, CLI::Option* preemptive, const std::string& prefix = "");

// A progress bar on stderr, only when stderr is a terminal; a no-op otherwise.
std::function<void(double)> progress_bar(const std::string& label);
void progress_done();

}  // namespace duet::cli
