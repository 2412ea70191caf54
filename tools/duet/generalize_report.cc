// The reports of duet eval --protocol generalize (generalize_protocol.h): one
// row per held-out source, the mean over sources and the targets.
#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tools/duet/generalize_protocol.h"
#include "policy/learn/agents/order_prior.h"

namespace duet::cli {
namespace {

// Targets: mean JCT ratio over held-out sources, every source, mean fee ratio.
constexpr double kMeanJctTarget = 0.85, kEachJctTarget = 1.0, kFeeTarget = 0.95;

// Geometric mean of a[j] / b[j] over the scenarios with both positive; 0 if none.
double geo_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  int n = 0;
  for (size_t j = 0; j < a.size() && j < b.size(); ++j)
    if (a[j] > 0 && b[j] > 0) {
      s += std::log(a[j] / b[j]);
      ++n;
    }
  return n ? std::exp(s / n) : 0;
}

double geo_mean(const std::vector<double>& a) {
  double s = 0;
  for (double x : a) s += std::log(std::max(x, 1e-12));
  return a.empty() ? 0 : std::exp(s / static_cast<double>(a.size()));
}

double mean(const std::vector<double>& a) {
  double s = 0;
  for (double x : a) s += x;
  return a.empty() ? 0 : s / static_cast<double>(a.size());
}

std::vector<double> jcts(const std::vector<RunMetrics>& v) {
  std::vector<double> o;
  for (const RunMetrics& m : v) o.push_back(m.jct_h);
  return o;
}
std::vector<double> fees(const std::vector<RunMetrics>& v) {
  std::vector<double> o;
  for (const RunMetrics& m : v) o.push_back(m.fees_usd);
  return o;
}

struct Overall {
  double mean_jct = 0, mean_fee = 0;
  int within_one = 0, n = 0;
};
Overall overall(const std::vector<HeldOutResult>& rs) {
  Overall o;
  std::vector<double> j, f;
  for (const HeldOutResult& r : rs) {
    const HeldOutSummary s = summarize(r);
    if (s.best.empty()) continue;
    j.push_back(s.jct_ratio.at(s.median_seed));
    f.push_back(s.fee_ratio.at(s.median_seed));
    o.within_one += j.back() <= kEachJctTarget;
  }
  o.n = static_cast<int>(j.size());
  o.mean_jct = mean(j);
  o.mean_fee = mean(f);
  return o;
}

std::string seed_list(const std::vector<uint64_t>& seeds) {
  std::string s;
  for (uint64_t x : seeds) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

const char* met(bool b) { return b ? "**met**" : "**not met**"; }

}  // namespace

HeldOutSummary summarize(const HeldOutResult& r) {
  HeldOutSummary s;
  int best = -1;
  double best_gm = 0;
  for (size_t b = 0; b < r.base.size(); ++b) {
    const double gm = geo_mean(jcts(r.base[b]));
    if (best < 0 || gm < best_gm) {
      best = static_cast<int>(b);
      best_gm = gm;
    }
  }
  if (best < 0 || r.duet.empty()) return s;
  s.best = r.baselines[best];
  s.best_mean_jct_h = mean(jcts(r.base[best]));
  std::vector<std::pair<double, uint64_t>> by_ratio;
  for (const auto& [seed, runs] : r.duet) {
    s.jct_ratio[seed] = geo_ratio(jcts(runs), jcts(r.base[best]));
    s.fee_ratio[seed] = geo_ratio(fees(runs), fees(r.base[best]));
    by_ratio.emplace_back(s.jct_ratio[seed], seed);
  }
  std::sort(by_ratio.begin(), by_ratio.end());
  s.median_seed = by_ratio[by_ratio.size() / 2].second;
  s.median_jct_h = mean(jcts(r.duet.at(s.median_seed)));
  return s;
}

void write_generalize_md(const std::string& path, const GeneralizeArgs& a, const std::vector<HeldOutResult>& rs) {
  std::ofstream f(path);
  const GeneralizeBudget& b = a.budget;
  f << "# duet eval --protocol generalize\n\n";
  f << fmt::format(
      "Leave one source out: for each held-out cluster family or workload preset, duet/duet is trained "
      "without it ({} scenarios drawn from the other presets per training seed, {} PPO episodes on each in turn, "
      "{}-job windows) and evaluated on {} scenarios of the held-out preset ({} jobs each, offered load {:.2f}) "
      "against {} non-oracle baseline pairs. Training seeds: {}.{}{}\n\n",
      b.train_scenarios, b.episodes, b.window, b.eval_scenarios, b.jobs, a.load,
      rs.empty() ? 0 : rs.front().baselines.size(), seed_list(a.seeds),
      a.preemptive ? " The models are preemptive (" + learn::preemptive_flags(a.preemptive).substr(1) + ")." : "",
      a.spread == learn::SpreadSets::fastest
          ? ""
          : fmt::format(" The models spread a job that no machine holds alone by the {} rule (duet train "
                        "--spread-sets {}), in training and in duet/duet's runs.",
                        learn::spread_sets_name(a.spread), learn::spread_sets_name(a.spread)));
  f << "**best** = the baseline pair with the lowest geometric mean of mean JCT over the eval scenarios; its mean "
       "JCT is the arithmetic mean over them (hours). Ratios are geometric means over the eval scenarios of "
       "duet/duet's value over the best baseline's; the row shows the **median** training seed (by JCT ratio), "
       "*seeds* the lowest and highest over seeds.\n\n";
  f << "| held out | kind | best baseline | its mean JCT h | duet/duet mean JCT h | JCT ratio (median seed) | "
       "seeds | fee ratio | ≤ 1.0x |\n|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const HeldOutResult& r : rs) {
    const HeldOutSummary s = summarize(r);
    if (s.best.empty()) continue;
    double lo = 1e300, hi = 0;
    for (const auto& [seed, x] : s.jct_ratio) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double jr = s.jct_ratio.at(s.median_seed);
    f << fmt::format("| {} | {} | {} | {:.2f} | {:.2f} | {:.3f} | {:.3f}–{:.3f} | {:.3f} | {} |\n", r.plan.source,
                     r.plan.is_family ? "family" : "workload", s.best, s.best_mean_jct_h, s.median_jct_h, jr, lo, hi,
                     s.fee_ratio.at(s.median_seed), jr <= kEachJctTarget ? "yes" : "no");
  }
  const Overall o = overall(rs);
  f << fmt::format("| **mean over {} held-out sources** | | | | | **{:.3f}** | | **{:.3f}** | {} of {} |\n\n", o.n,
                   o.mean_jct, o.mean_fee, o.within_one, o.n);
  f << "Targets:\n\n";
  f << fmt::format("- mean JCT ratio over held-out sources ≤ {:.2f}x: {:.3f}x, {}\n", kMeanJctTarget, o.mean_jct,
                   met(o.n > 0 && o.mean_jct <= kMeanJctTarget));
  f << fmt::format("- JCT ratio ≤ {:.1f}x on every held-out source: {} of {}, {}\n", kEachJctTarget, o.within_one, o.n,
                   met(o.n > 0 && o.within_one == o.n));
  f << fmt::format("- fee ratio ≤ {:.2f}x (mean over held-out sources): {:.3f}x, {}\n\n", kFeeTarget, o.mean_fee,
                   met(o.n > 0 && o.mean_fee <= kFeeTarget));
  for (const HeldOutResult& r : rs) {
    f << fmt::format("## {} held out\n\nEval scenarios:\n\n", r.plan.source);
    for (const std::string& l : r.eval_lines) f << "- " << l << "\n";
    const HeldOutSummary s = summarize(r);
    if (!s.best.empty()) {
      const int best = static_cast<int>(std::find(r.baselines.begin(), r.baselines.end(), s.best) - r.baselines.begin());
      f << fmt::format("\nMean JCT (h) per eval scenario: {0} and duet/duet per training seed.\n\n| eval ({0}) |",
                       s.best);
      for (const auto& [seed, runs] : r.duet) f << fmt::format(" seed {} |", seed);
      f << " best baseline of the scenario |\n|---:|";
      for (size_t k = 0; k < r.duet.size(); ++k) f << "---:|";
      f << "---|\n";
      for (size_t j = 0; j < r.plan.eval.size() && j < r.base[best].size(); ++j) {
        f << fmt::format("| {} ({:.2f}) |", j + 1, r.base[best][j].jct_h);
        for (const auto& [seed, runs] : r.duet) f << fmt::format(" {:.2f} |", runs[j].jct_h);
        size_t bj = 0;
        for (size_t b = 1; b < r.base.size(); ++b)
          if (r.base[b][j].jct_h < r.base[bj][j].jct_h) bj = b;
        f << fmt::format(" {} {:.2f} |\n", r.baselines[bj], r.base[bj][j].jct_h);
      }
    }
    f << "\nTraining scenarios (family/workload seed), per training seed:\n\n";
    for (const auto& [seed, draws] : r.plan.train) {
      f << fmt::format("- seed {}:", seed);
      for (const ScenarioDraw& d : draws) f << fmt::format(" {}/{} {}", d.family, d.workload, d.seed);
      f << "\n";
    }
    f << fmt::format("\nTraining wall time {:.0f} s.\n\n", r.train_wall_s);
  }
}

void write_generalize_json(const std::string& path, const GeneralizeArgs& a, const std::vector<HeldOutResult>& rs) {
  nlohmann::ordered_json j;
  j["protocol"] = "generalize";
  j["seeds"] = a.seeds;
  j["budget"] = {{"train_scenarios", a.budget.train_scenarios}, {"episodes", a.budget.episodes},
                 {"eval_scenarios", a.budget.eval_scenarios},   {"jobs", a.budget.jobs},
                 {"window", a.budget.window},                   {"load", a.load},
                 {"fee_lambda", a.fee_lambda}};
  j["preemptive"] = a.preemptive != 0;
  if (a.preemptive) j["prior"] = learn::preemptive_prior_name(a.preemptive);
  j["spread_sets"] = learn::spread_sets_name(a.spread);
  auto draws = [](const std::vector<ScenarioDraw>& v) {
    nlohmann::ordered_json o = nlohmann::ordered_json::array();
    for (const ScenarioDraw& d : v) o.push_back({{"family", d.family}, {"workload", d.workload}, {"seed", d.seed}});
    return o;
  };
  for (const HeldOutResult& r : rs) {
    nlohmann::ordered_json e;
    const HeldOutSummary s = summarize(r);
    e["source"] = r.plan.source;
    e["kind"] = r.plan.is_family ? "family" : "workload";
    e["eval_scenarios"] = draws(r.plan.eval);
    for (const auto& [seed, t] : r.plan.train) e["train_scenarios"][std::to_string(seed)] = draws(t);
    e["best_baseline"] = s.best;
    e["best_mean_jct_h"] = s.best_mean_jct_h;
    e["median_seed"] = s.median_seed;
    for (const auto& [seed, x] : s.jct_ratio) e["jct_ratio"][std::to_string(seed)] = x;
    for (const auto& [seed, x] : s.fee_ratio) e["fee_ratio"][std::to_string(seed)] = x;
    for (size_t b = 0; b < r.baselines.size(); ++b) {
      e["baselines"][r.baselines[b]]["mean_jct_h"] = jcts(r.base[b]);
      e["baselines"][r.baselines[b]]["fees_usd"] = fees(r.base[b]);
    }
    for (const auto& [seed, runs] : r.duet) {
      e["duet"][std::to_string(seed)]["mean_jct_h"] = jcts(runs);
      e["duet"][std::to_string(seed)]["fees_usd"] = fees(runs);
    }
    e["train_wall_s"] = r.train_wall_s;
    j["held_out"].push_back(e);
  }
  const Overall o = overall(rs);
  j["mean_jct_ratio"] = o.mean_jct;
  j["mean_fee_ratio"] = o.mean_fee;
  j["sources_within_1x"] = o.within_one;
  j["targets"] = {{"mean_jct_ratio_le_0.85", o.n > 0 && o.mean_jct <= kMeanJctTarget},
                  {"every_jct_ratio_le_1.0", o.n > 0 && o.within_one == o.n},
                  {"mean_fee_ratio_le_0.95", o.n > 0 && o.mean_fee <= kFeeTarget}};
  std::ofstream(path) << j.dump(2) << "\n";
}

}  // namespace duet::cli
