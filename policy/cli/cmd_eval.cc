// duet eval: run many ordering/placement pairs on one trace and cluster, write
// summary.md, summary.json and gnuplot PNGs into --out.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "policy/cli/common.h"
#include "policy/core/policy.h"
#include "policy/report/summary.h"
#include "policy/sim/simulator.h"

namespace duet::cli {
namespace {

struct EvalArgs {
  Inputs in;
  std::string policies = "all", out;
  bool no_plots = false;
};

// "all" or a comma list of ORDER/PLACE, either side may be '*'.
std::vector<std::pair<std::string, std::string>> expand(const std::string& list) {
  std::vector<std::pair<std::string, std::string>> v;
  auto add_pair = [&](const std::string& o, const std::string& p) {
    // Learned policies ("duet") join wildcards only when --model was given.
    auto wild = [](const std::string& pat, const std::string& n) { return pat == "*" && (n != "duet" || model_given()); };
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
      if (o != "*") make_ordering(o);  // unknown names: an error listing the known ones
      if (p != "*") make_placement(p);
      add_pair(o, p);
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

void setup(CLI::App& parent) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* app = parent.add_subcommand("eval", "compare ordering/placement pairs: summary.md, summary.json, PNG plots");
  args->in.add_options(*app);
  app->add_option("--policies", args->policies,
                  "comma list of ORDER/PLACE ('*' = every one) or 'all' (every baseline pair)")->capture_default_str();
  app->add_option("--out", args->out, "output directory (created)")->required();
  app->add_flag("--no-plots", args->no_plots, "skip gnuplot (still writes the plot data and script)");
  app->callback([args] {
    auto pairs = expand(args->policies);
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
      auto ordering = make_ordering(pairs[i].first);
      auto placement = make_placement(pairs[i].second, args->in.seed);
      SimOptions o;
      o.model.seed = args->in.seed;
      o.model.ideal = args->in.ideal;
      o.period_s = args->in.period;
      o.drop_oversized = args->in.drop_oversized;
      o.progress = progress_bar(fmt::format("eval {}/{} {}", i + 1, pairs.size(), pairs[i].first));
      Simulator sim(l->trace, l->cluster, l->table, &l->prices, o);
      sim.set_policies(ordering.get(), placement.get());
      rows.push_back(sim.run());
      progress_done();
      meta.dropped = sim.dropped_jobs();
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

const CommandRegistrar reg(20, setup);

}  // namespace
}  // namespace duet::cli
