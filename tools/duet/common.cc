#include "tools/duet/common.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "policy/io/cluster.h"
#include "policy/model/gavel.h"
#include "policy/sim/simulator.h"

namespace duet::cli {

void Inputs::add_options(CLI::App& app, bool required) {
  app.add_option("--trace", trace, "job trace CSV (duet-trace(5); convert Philly with 'duet convert philly')")
      ->required(required);
  app.add_option("--cluster", cluster, "cluster CSV (duet-cluster(5); convert PAI with 'duet convert pai')")
      ->required(required);
  app.add_option("--seed", seed, "seed for job types, machine speeds, fluctuation, random placement")
      ->capture_default_str();
  app.add_flag("--ideal", ideal, "every speed effect off: a job runs exactly its duration, preemption is free");
  app.add_option("--period", period, "decision period in seconds for preemptive policies")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--restart-overhead", restart_overhead,
                 "reference seconds of work a preempted job loses each time it restarts (checkpoint and restore)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--preempt-min-run-time", preempt_limits.min_run_s,
                 "a run shorter than this (s) is not preempted, as duet.conf PreemptMinRunTime (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option(
         "--preempt-job-interval", preempt_limits.job_interval_s,
         "a job preempted before must have run this long (s) again, as duet.conf PreemptJobInterval (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option(
         "--preempt-max-restarts", preempt_limits.max_restarts,
         "a job preempted this many times is not preempted again, as duet.conf PreemptMaxRestarts (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--preempt-max-per-pass", preempt_limits.max_per_pass,
                 "at most this many preemptions a decision, the lowest ranked first, as duet.conf PreemptMaxPerRescore "
                 "(0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--drop-oversized", drop_oversized, "leave out (and count) jobs larger than the GPUs they may use");
  app.add_option("--throughputs", throughputs, "Gavel throughput JSON (default: the installed data/gavel copy)");
  app.add_option("--prices", prices, "GPU price/power CSV (duet-prices(5); default: the installed etc/gpu-prices.csv)");
  app.add_option("--model", model, "model file for the learned policies --order duet / --place duet (duet-model(5))");
  app.add_flag_callback(
      "--no-messages", [this] { messages = false; },
      "the learned agents exchange zeros instead of their messages (for models trained with duet train --no-messages)");
  app.add_flag_callback(
      "--no-preemption", [this] { preemption = false; },
      "a preemptive model's ordering ranks pending jobs only and never preempts, as priority/duet does with duet.conf "
      "Preemption=off (the baselines are unchanged)");
}

PolicyContext policy_context(const Inputs& in) {
  PolicyContext c;
  if (!in.model.empty()) c.model = load_policy_model(in.model);
  c.seed = in.seed;
  c.messages = in.messages;
  c.preemption = in.preemption;
  return c;
}

std::unique_ptr<Loaded> load(const Inputs& in) {
  auto l = std::make_unique<Loaded>();
  std::string tp = in.throughputs.empty() ? find_data("data/gavel/simulation_throughputs.json") : in.throughputs;
  if (tp.empty())
    throw std::runtime_error(
        "cannot find data/gavel/simulation_throughputs.json; give --throughputs or set DUET_DATA_DIR");
  std::string pr = in.prices.empty() ? find_etc("gpu-prices.csv") : in.prices;
  if (pr.empty()) throw std::runtime_error("cannot find gpu-prices.csv; give --prices or set DUET_ETC_DIR");
  l->table = read_gavel(tp);
  l->prices = PriceTable::read(pr);
  l->trace = read_trace(in.trace);
  l->cluster = build_cluster(read_cluster(in.cluster), l->table);
  for (const auto& t : l->cluster.gpu_types) l->prices.lookup(t.name);  // fails early without a price
  return l;
}

std::vector<std::pair<std::string, std::string>> expand_pairs(const std::string& list, const PolicyContext& ctx) {
  std::vector<std::pair<std::string, std::string>> v;
  auto add_pair = [&](const std::string& o, const std::string& p) {
    // Learned policies ("duet", "duet-...") join wildcards only when --model was given.
    // Ablation variants ("duet-rbf", ...) and the baselines' "-wait" variants only by name.
    auto wild = [&ctx](const std::string& pat, const std::string& n) {
      if (pat != "*" || n.rfind("duet-", 0) == 0 || n.ends_with("-wait")) return false;
      return n != "duet" || ctx.model != nullptr;
    };
    for (const auto& on : ordering_names())
      if (wild(o, on) || o == on)
        for (const auto& pn : placement_names())
          if (wild(p, pn) || p == pn) v.emplace_back(on, pn);
  };
  size_t b = 0;
  for (;;) {
    size_t e = list.find(',', b);
    std::string item = list.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (item == "all") {
      add_pair("*", "*");
    } else {
      size_t s = item.find('/');
      if (s == std::string::npos)
        throw std::invalid_argument("--policies: expected ORDER/PLACE (or 'all'), got '" + item + "'");
      std::string o = item.substr(0, s), p = item.substr(s + 1);
      if (o != "*") make_ordering(o, ctx);  // unknown names: an error listing the known ones
      if (p != "*") make_placement(p, ctx);
      add_pair(o, p);
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

RunOptions run_options(const Inputs& in, std::string progress_label) {
  RunOptions o;
  o.seed = in.seed;
  o.ideal = in.ideal;
  o.period_s = in.period;
  o.restart_overhead_s = in.restart_overhead;
  o.preempt_limits = in.preempt_limits;
  o.drop_oversized = in.drop_oversized;
  o.progress_label = std::move(progress_label);
  return o;
}

SimResult run_pair(const Trace& trace, const ClusterModel& cluster, const ThroughputTable& table,
                   const PriceTable* prices, const std::string& ordering, const std::string& placement,
                   const PolicyContext& ctx, const RunOptions& o, int64_t* dropped, SimObserver* observer) {
  PolicyContext c = ctx;
  c.seed = o.seed;
  c.throughputs = &table;
  auto ord = make_ordering(ordering, c);
  auto plc = make_placement(placement, c);
  SimOptions so;
  so.model.seed = o.seed;
  so.model.ideal = o.ideal;
  so.period_s = o.period_s;
  so.model.restart_overhead_s = o.restart_overhead_s;
  so.preempt_limits = o.preempt_limits;
  so.drop_oversized = o.drop_oversized;
  so.progress = progress_bar(o.progress_label);
  Simulator sim(trace, cluster, table, prices, so);
  sim.set_policies(ord.get(), plc.get());
  if (observer) sim.set_observer(observer);
  SimResult r = sim.run();
  progress_done();
  if (dropped) *dropped = sim.dropped_jobs();
  return r;
}

void add_prior_option(CLI::App* app, std::string& prior, CLI::Option* preemptive, const std::string& prefix) {
  app->add_option("--prior", prior,
                  prefix +
                      "a preemptive model's second prior: las (Tiresias' discretised LAS) or gittins (the Gittins rank "
                      "of the job's duration from history)")
      ->check(CLI::IsMember({"las", "gittins"}))
      ->needs(preemptive)
      ->capture_default_str();
}

void write_to(const std::string& out, const std::function<void(std::ostream&)>& w) {
  if (out.empty() || out == "-") {
    w(std::cout);
    return;
  }
  std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    w(f);
    if (!f.flush()) throw std::runtime_error("write error on " + tmp);
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp + " to " + out);
}

static bool g_bar_shown = false;

std::function<void(double)> progress_bar(const std::string& label) {
  if (!isatty(STDERR_FILENO)) return {};
  return [label](double f) {
    int n = static_cast<int>(std::clamp(f, 0.0, 1.0) * 40);
    std::fprintf(stderr, "\r%-24.24s [%-40s] %3d%%", label.c_str(), std::string(n, '#').c_str(),
                 static_cast<int>(f * 100));
    std::fflush(stderr);
    g_bar_shown = true;
  };
}

void progress_done() {
  if (!g_bar_shown) return;
  std::fprintf(stderr, "\r%*s\r", 75, "");
  std::fflush(stderr);
  g_bar_shown = false;
}

}  // namespace duet::cli
