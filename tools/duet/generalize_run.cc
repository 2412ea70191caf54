// Running duet eval --protocol generalize (generalize_protocol.h): per held-out
// source, the training chains (one per seed) and the evaluations.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "tools/duet/common.h"
#include "tools/duet/eval_protocol.h"
#include "tools/duet/generalize_protocol.h"
#include "policy/io/cluster.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/io/trace.h"
#include "policy/learn/train/trainer.h"
#include "policy/model/gavel.h"
#include "policy/registry/policy_registry.h"
#include "policy/scenario/scenario.h"

namespace duet::cli {
namespace {

// The data every scenario is drawn with, read once.
struct GenData {
  ThroughputTable table;
  PriceTable prices;
  Trace philly;
  ClusterSpec pai;
  ScenarioSources src;
};

std::string data_file(const std::string& given, const char* rel, const char* opt) {
  std::string p = given.empty() ? find_data(rel) : given;
  if (p.empty()) throw std::runtime_error(fmt::format("cannot find {}; give {} or set DUET_DATA_DIR", rel, opt));
  return p;
}

bool uses(const std::vector<HeldOutPlan>& plans, bool family, const std::vector<std::string>& names) {
  auto hit = [&](const ScenarioDraw& d) {
    return std::find(names.begin(), names.end(), family ? d.family : d.workload) != names.end();
  };
  for (const HeldOutPlan& p : plans) {
    if (std::any_of(p.eval.begin(), p.eval.end(), hit)) return true;
    for (const auto& [s, t] : p.train)
      if (std::any_of(t.begin(), t.end(), hit)) return true;
  }
  return false;
}

std::unique_ptr<GenData> read_data(const GeneralizeArgs& a, const std::vector<HeldOutPlan>& plans) {
  auto d = std::make_unique<GenData>();
  d->table = read_gavel(data_file(a.throughputs, "data/gavel/simulation_throughputs.json", "--throughputs"));
  const std::string pr = a.prices.empty() ? find_etc("gpu-prices.csv") : a.prices;
  if (pr.empty()) throw std::runtime_error("cannot find gpu-prices.csv; give --prices or set DUET_ETC_DIR");
  d->prices = PriceTable::read(pr);
  // Only the presets that resample them need the data files.
  if (uses(plans, false, {"philly", "philly-vc"})) {
    d->philly = read_philly(data_file(a.philly, "data/philly/philly.csv", "--philly"));
    d->src.philly = &d->philly;
  }
  if (uses(plans, true, {"pai"})) {
    d->pai = read_pai(data_file(a.pai, "data/pai/pai_machine_spec.csv", "--pai")).cluster;
    d->src.pai = &d->pai;
  }
  return d;
}

Scenario draw_scenario(const ScenarioDraw& d, const GeneralizeArgs& a, const GenData& data) {
  ScenarioSpec s;
  apply_family(s, d.family);
  apply_workload(s, d.workload);
  s.jobs = a.budget.jobs;
  s.load = {a.load, a.load};
  return generate_scenario(s, d.seed, data.table, data.src);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Progress {
  size_t done = 0, total = 0;
  std::string tag() { return fmt::format("[{}/{}]", ++done, total); }
};

// One training seed: the seeded initial model trained on its first scenario,
// each later scenario fine-tuning the previous one (duet train --init), as
// duet train does on one trace. Returns the last model's path.
std::string train_chain(const HeldOutPlan& p, uint64_t seed, const GeneralizeArgs& a, const GenData& data,
                        const std::string& dir, Progress& prog) {
  const std::vector<ScenarioDraw>& draws = p.train.at(seed);
  std::filesystem::create_directories(dir);
  std::ofstream list(dir + "/train-scenarios.txt");
  std::string model;
  for (size_t i = 0; i < draws.size(); ++i) {
    const ScenarioDraw& d = draws[i];
    const auto t0 = std::chrono::steady_clock::now();
    const Scenario sc = draw_scenario(d, a, data);
    const ClusterModel cluster = build_cluster(sc.cluster, data.table);
    learn::TrainOptions o;
    o.out = fmt::format("{}/stage{}.model", dir, i + 1);
    o.seed = seed + 1000 * i;  // the first stage starts from duet train --seed SEED's weights
    o.episodes = a.budget.episodes;
    o.window_jobs = a.budget.window;
    o.bc_episodes = 0;
    o.eval_every = a.budget.episodes;
    o.fee_lambda = a.fee_lambda;
    o.keep_last = true;
    o.init = model;
    o.messages = a.messages;
    o.period_s = a.period;        // as the evaluation simulates
    o.preemptive = a.preemptive;  // the first stage's; later stages inherit it through --init
    o.spread = a.spread;
    learn::train(sc.trace, cluster, data.table, &data.prices, o);
    model = o.out;
    list << fmt::format("{} {} {}\n", d.family, d.workload, d.seed);
    std::cerr << fmt::format("duet eval: {} held out {}: seed {} trained on {}/{} (scenario seed {}, {} GPUs) "
                             "{}/{} ({:.1f} s)\n",
                             prog.tag(), p.source, seed, d.family, d.workload, d.seed, sc.cluster.total_gpus(), i + 1,
                             draws.size(), seconds_since(t0));
  }
  return model;
}

RunMetrics metrics(const SimResult& r) { return RunMetrics{r.avg_jct_s / 3600, r.fees_usd}; }

HeldOutResult run_source(const HeldOutPlan& p, const GeneralizeArgs& a, const GenData& data,
                         const std::vector<std::pair<std::string, std::string>>& pairs, Progress& prog) {
  HeldOutResult r;
  r.plan = p;
  const std::string dir = a.out + "/" + p.source;
  const auto t0 = std::chrono::steady_clock::now();
  std::map<uint64_t, std::string> models;
  for (uint64_t s : a.seeds) models[s] = train_chain(p, s, a, data, fmt::format("{}/seed{}", dir, s), prog);
  r.train_wall_s = seconds_since(t0);

  for (const auto& [o, pl] : pairs) r.baselines.push_back(o + "/" + pl);
  r.base.assign(pairs.size(), {});
  std::map<uint64_t, PolicyContext> ctx;
  for (const auto& [s, m] : models) {
    ctx[s].model = load_policy_model(m);
    ctx[s].messages = a.messages;
  }
  for (size_t j = 0; j < p.eval.size(); ++j) {
    const ScenarioDraw& d = p.eval[j];
    const Scenario sc = draw_scenario(d, a, data);
    const ClusterModel cluster = build_cluster(sc.cluster, data.table);
    const std::string edir = fmt::format("{}/eval{}", dir, j + 1);
    std::filesystem::create_directories(edir);
    write_to(edir + "/trace.csv", [&](std::ostream& f) { write_trace(f, sc.trace); });
    write_to(edir + "/cluster.csv", [&](std::ostream& f) { write_cluster(f, sc.cluster); });
    r.eval_lines.push_back(fmt::format("{}/{} seed {}: {} jobs, {} GPUs on {} machines, offered load {:.2f}{}",
                                       d.family, d.workload, d.seed, sc.trace.jobs.size(), sc.cluster.total_gpus(),
                                       sc.cluster.machines.size(), sc.offered_load,
                                       sc.load_out_of_reach() ? " (the most these jobs can offer)" : ""));
    RunOptions ro;
    ro.seed = d.seed;
    ro.period_s = a.period;
    ro.drop_oversized = true;
    auto run = [&](const std::string& o, const std::string& pl, const PolicyContext& c, const std::string& who) {
      const SimResult s = run_pair(sc.trace, cluster, data.table, &data.prices, o, pl, c, ro, nullptr);
      std::cerr << fmt::format("duet eval: {} held out {}: eval {}/{} ({}/{}) {}: mean JCT {:.2f} h ({:.1f} s)\n",
                               prog.tag(), p.source, j + 1, p.eval.size(), d.family, d.workload, who,
                               s.avg_jct_s / 3600, s.wall_s);
      return metrics(s);
    };
    for (size_t b = 0; b < pairs.size(); ++b)
      r.base[b].push_back(run(pairs[b].first, pairs[b].second, PolicyContext{}, r.baselines[b]));
    for (const auto& [s, c] : ctx) r.duet[s].push_back(run("duet", "duet", c, fmt::format("duet/duet seed {}", s)));
  }
  return r;
}

}  // namespace

// Without --policies each pair comes with its placement's "-wait" variant: the
// learned placement waits for one machine to hold a job whole, so a baseline
// that waits the same way is the fair comparison (duet-sim(1)).
std::vector<std::pair<std::string, std::string>> generalize_baseline_pairs(const GeneralizeArgs& a) {
  const PolicyContext none;
  std::vector<std::pair<std::string, std::string>> pairs =
      a.policies.empty() ? baseline_protocol_pairs(none) : expand_pairs(a.policies, none);
  std::vector<std::pair<std::string, std::string>> v;
  const std::vector<std::string> places = placement_names();
  for (auto& p : pairs) {
    if (make_ordering(p.first, none)->oracle()) continue;
    const std::string wait = p.second + "-wait";
    const bool add_wait = a.policies.empty() && std::find(places.begin(), places.end(), wait) != places.end();
    v.push_back(p);
    if (add_wait) v.emplace_back(p.first, wait);
  }
  if (v.empty()) throw std::invalid_argument("generalize: no non-oracle baseline pair to compare with");
  return v;
}

std::vector<HeldOutResult> run_generalize(const GeneralizeArgs& a) {
  const std::vector<HeldOutPlan> plans = plan_generalize(a);
  const auto pairs = generalize_baseline_pairs(a);
  const auto data = read_data(a, plans);
  std::filesystem::create_directories(a.out);
  Progress prog;
  for (const HeldOutPlan& p : plans)
    prog.total += a.seeds.size() * static_cast<size_t>(a.budget.train_scenarios) +
                  p.eval.size() * (pairs.size() + a.seeds.size());
  std::vector<HeldOutResult> results;
  for (const HeldOutPlan& p : plans) {
    results.push_back(run_source(p, a, *data, pairs, prog));
    // Rewritten after each source so that a long run shows results as it goes.
    write_generalize_md(a.out + "/summary.md", a, results);
    write_generalize_json(a.out + "/summary.json", a, results);
  }
  return results;
}

}  // namespace duet::cli
