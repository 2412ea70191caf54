// duet eval: run many ordering/placement pairs on one trace and cluster, write
// summary.md, summary.json and gnuplot PNGs into --out.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "tools/duet/commands.h"
#include "tools/duet/common.h"
#include "tools/duet/eval_protocol.h"
#include "tools/duet/generalize_protocol.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/report/summary.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct EvalArgs {
  Inputs in;
  std::string policies, out, protocol, split = "test", loads = "70,90,110", seeds = "1,2,3", philly, pai;
  bool no_plots = false;
  // --protocol generalize: a budget name, then any knob given replaces its value (0 = the budget's).
  std::string budget = "small", sources;
  int train_scenarios = 0, eval_scenarios = 0, episodes = 0, jobs = 0;
  std::size_t window = 0;
  bool preemptive = false;
  std::string prior = "las", spread = "fastest";
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  size_t b = 0;
  for (;;) {
    size_t e = s.find(',', b);
    std::string item = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!item.empty()) v.push_back(item);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

void run_generalize_command(const EvalArgs& a, const PolicyContext& ctx) {
  if (ctx.model) throw std::invalid_argument("--protocol generalize trains its own models: leave out --model");
  if (!ctx.preemption)
    throw std::invalid_argument("--protocol generalize trains its own models: --no-preemption applies to a --model");
  GeneralizeArgs g;
  g.budget = generalize_budget(a.budget);
  if (a.train_scenarios > 0) g.budget.train_scenarios = a.train_scenarios;
  if (a.eval_scenarios > 0) g.budget.eval_scenarios = a.eval_scenarios;
  if (a.episodes > 0) g.budget.episodes = a.episodes;
  if (a.jobs > 0) g.budget.jobs = a.jobs;
  if (a.window > 0) g.budget.window = a.window;
  g.sources = split_list(a.sources);
  g.seeds = parse_seeds(a.seeds);
  g.policies = a.policies;
  g.throughputs = a.in.throughputs;
  g.prices = a.in.prices;
  g.philly = a.philly;
  g.pai = a.pai;
  g.out = a.out;
  g.period = a.in.period;
  g.messages = ctx.messages;
  g.preemptive = a.preemptive ? learn::preemptive_prior(a.prior) : 0;
  g.spread = learn::parse_spread_sets(a.spread);
  run_generalize(g);
  std::cout << a.out << "/summary.md\n" << a.out << "/summary.json\n";
}

void run_protocol_command(const EvalArgs& a, const PolicyContext& ctx) {
  if (a.protocol != "philly" && a.protocol != "generalize")
    throw std::invalid_argument("--protocol: expected 'philly' or 'generalize', got '" + a.protocol + "'");
  if (!a.in.trace.empty() || !a.in.cluster.empty())
    throw std::invalid_argument("--protocol makes its own traces and clusters: leave out --trace and --cluster");
  if (a.protocol == "generalize") return run_generalize_command(a, ctx);
  ProtocolArgs p;
  p.philly = a.philly;
  p.pai = a.pai;
  p.split = a.split;
  p.loads = parse_loads(a.loads);
  p.seeds = parse_seeds(a.seeds);
  p.policies = a.policies;
  p.context = ctx;
  p.throughputs = a.in.throughputs;
  p.prices = a.in.prices;
  p.out = a.out;
  p.period = a.in.period;
  p.no_plots = a.no_plots;
  run_protocol(p);
}

}  // namespace

void setup_eval(CLI::App* app) {
  auto args = std::make_shared<EvalArgs>();
  args->in.add_options(*app, false);
  app->add_option("--policies", args->policies,
                  "comma list of ORDER/PLACE ('*' = every one) or 'all' (every baseline pair; the default "
                  "without --protocol)");
  app->add_option("--protocol", args->protocol,
                  "'philly': the evaluation protocol (Philly split, PAI clusters at --loads, --seeds); 'generalize': "
                  "leave one scenario source out, train without it, evaluate on it (duet-eval(1))");
  app->add_option("--split", args->split, "protocol split: train (Sep-Oct), validate (Nov 1-15), test (Nov 16-)")
      ->capture_default_str();
  app->add_option("--loads", args->loads, "protocol: offered loads in % of the cluster's capacity")
      ->capture_default_str();
  app->add_option("--seeds", args->seeds,
                  "protocol: seeds (philly: cluster sample, machine speeds, fluctuation; generalize: training seeds)")
      ->capture_default_str();
  app->add_option("--philly", args->philly, "protocol: Philly CSV (default: the installed data/philly copy)");
  app->add_option("--pai", args->pai, "protocol: PAI machine spec CSV (default: the installed data/pai copy)");
  app->add_option("--budget", args->budget,
                  "generalize: small (about an hour on two busy cores) or full; the knobs below replace its values")
      ->check(CLI::IsMember({"small", "full"}))
      ->capture_default_str();
  app->add_option("--sources", args->sources,
                  "generalize: comma list of cluster families and workloads to hold out (default: every one)");
  app->add_option("--train-scenarios", args->train_scenarios, "generalize: training scenarios per seed")
      ->check(CLI::Range(1, 10000));
  app->add_option("--eval-scenarios", args->eval_scenarios, "generalize: eval scenarios per held-out source")
      ->check(CLI::Range(1, 10000));
  app->add_option("--episodes", args->episodes, "generalize: PPO episodes on each training scenario")
      ->check(CLI::Range(1, 100000));
  app->add_option("--jobs", args->jobs, "generalize: jobs per scenario")->check(CLI::Range(2, 1000000));
  app->add_option("--window", args->window, "generalize: jobs per training episode")->check(CLI::Range(1, 1000000));
  auto* preemptive =
      app->add_flag("--preemptive", args->preemptive, "generalize: train preemptive models (duet train --preemptive)");
  add_prior_option(app, args->prior, preemptive, "generalize: ");
  app->add_option("--spread-sets", args->spread,
                  "generalize: the models' rule for the machines of a job no machine holds alone (duet train "
                  "--spread-sets)")
      ->check(CLI::IsMember(learn::spread_sets_names()))
      ->capture_default_str();
  app->add_option("--out", args->out, "output directory (created)")->required();
  app->add_flag("--no-plots", args->no_plots, "skip gnuplot (still writes the plot data and script)");
  app->callback([args] {
    const PolicyContext ctx = policy_context(args->in);
    if (!args->protocol.empty()) return run_protocol_command(*args, ctx);
    if (args->in.trace.empty() || args->in.cluster.empty())
      throw std::invalid_argument("--trace and --cluster are required (or give --protocol philly or generalize)");
    auto pairs = expand_pairs(args->policies.empty() ? "all" : args->policies, ctx);
    auto l = load(args->in);
    std::filesystem::create_directories(args->out);
    std::vector<SimResult> rows;
    EvalMeta meta;
    meta.trace = args->in.trace;
    meta.cluster = args->in.cluster;
    meta.seed = args->in.seed;
    meta.ideal = args->in.ideal;
    meta.total_gpus = l->cluster.total_gpus;
    for (size_t i = 0; i < pairs.size(); ++i) {
      const RunOptions o = run_options(args->in, fmt::format("eval {}/{} {}", i + 1, pairs.size(), pairs[i].first));
      rows.push_back(
          run_pair(l->trace, l->cluster, l->table, &l->prices, pairs[i].first, pairs[i].second, ctx, o, &meta.dropped));
      meta.jobs = rows.back().jobs;
      std::cerr << fmt::format("duet eval: {}/{} mean JCT {:.2f} h ({:.1f} s)\n", rows.back().ordering,
                               rows.back().placement, rows.back().avg_jct_s / 3600, rows.back().wall_s);
    }
    write_summary_md(args->out + "/summary.md", meta, rows);
    write_summary_json(args->out + "/summary.json", meta, rows);
    std::string gp = DUET_GNUPLOT;
    auto pngs = write_plots(args->out, rows, args->no_plots ? "" : gp);
    if (!args->no_plots && gp.empty()) std::cerr << "duet eval: gnuplot not found at configure time; no PNGs\n";
    std::cout << args->out << "/summary.md\n" << args->out << "/summary.json\n";
    for (const auto& p : pngs) std::cout << p << "\n";
  });
}

}  // namespace duet::cli
