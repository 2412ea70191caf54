// Shared pieces of the duet subcommands: finding installed data, loading the
// inputs, a progress bar on stderr when it is a terminal.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/model/prices.h"
#include "policy/model/throughput.h"
#include "policy/sim/metrics.h"

namespace duet::cli {

// `rel` (e.g. "data/gavel/simulation_throughputs.json") under $DUET_DATA_DIR,
// the installed data directory, or the source tree; "" if none has it.
std::string find_data(const std::string& rel);
// `name` (e.g. "gpu-prices.csv") under $DUET_ETC_DIR, SYSCONFDIR/duet, or the
// source tree's etc/; "" if none has it.
std::string find_etc(const std::string& name);

// Options every simulating command shares.
struct Inputs {
  std::string trace, cluster, throughputs, prices;
  uint64_t seed = 1;
  bool ideal = false, drop_oversized = false;
  double period = 300;
  std::string model;  // --model: model file for the learned "duet" policies
  // required = false: --trace/--cluster may be left out (the caller checks).
  void add_options(CLI::App& app, bool required = true);
};

// Called with --model's value as it is parsed (before any policy is built);
// the learned policies (policy/learn) install it. No hook: --model is kept only.
using ModelHook = void (*)(const std::string& path);
void set_model_hook(ModelHook hook);
// Called when --no-messages is given: the learned agents exchange zeros.
using MessagesHook = void (*)(bool on);
void set_messages_hook(MessagesHook hook);
// True once --model was given (wildcards in duet eval include "duet" only then).
bool model_given();

struct Loaded {
  Trace trace;
  ThroughputTable table;
  ClusterModel cluster;
  PriceTable prices;
};
// Reads and checks every input; throws InputError / std::runtime_error.
std::unique_ptr<Loaded> load(const Inputs& in);

// "all" or a comma list of ORDER/PLACE pairs, either side may be '*' (every
// registered policy; learned ones only with --model). Throws naming the item.
std::vector<std::pair<std::string, std::string>> expand_pairs(const std::string& list);

struct RunOptions {
  uint64_t seed = 1;
  bool ideal = false, drop_oversized = false;
  double period_s = 300;
  std::string progress_label;  // shown in the progress bar
};
// Builds the two policies by name and simulates them once; *dropped gets the
// jobs left out as oversized.
SimResult run_pair(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                   const PriceTable* prices, const std::string& ordering, const std::string& placement,
                   const RunOptions& o, int64_t* dropped);

// A progress bar on stderr, only when stderr is a terminal; a no-op otherwise.
std::function<void(double)> progress_bar(const std::string& label);
void progress_done();

// Registers a subcommand: `setup` adds it to the parent app. Used by
// subcommand files (also outside policy/cli) through a static CommandRegistrar.
using CommandSetup = void (*)(CLI::App& parent);
struct CommandRegistrar {
  CommandRegistrar(int order, CommandSetup setup);
};
void setup_commands(CLI::App& app);

}  // namespace duet::cli
