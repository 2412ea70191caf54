// duet eval --protocol generalize (tools/duet/generalize_*): the held-out
// source is never among the scenarios a model is trained on (in the plan and
// in what the run actually trained on), every eval scenario is of the
// held-out source, oracles are left out of the baselines and the default
// baselines include their "-wait" variants, the table has one
// row per source, and the plan is deterministic. A tiny budget: seconds.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "tools/duet/generalize_protocol.h"
#include "policy/learn/model/model_file.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet::cli;
using test_support::source_path;

namespace {

bool has_source(const ScenarioDraw& d, const HeldOutPlan& p) {
  return (p.is_family ? d.family : d.workload) == p.source;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

GeneralizeArgs tiny(const std::string& out) {
  GeneralizeArgs a;
  a.families = {"small", "gavel"};
  a.workloads = {"lognormal", "heavy-tail"};
  a.seeds = {1, 2, 3};
  a.budget.train_scenarios = 2;
  a.budget.episodes = 1;
  a.budget.eval_scenarios = 2;
  a.budget.jobs = 24;
  a.budget.window = 24;
  a.policies = "fifo/first-fit,qssf/fastest-first,srtf-oracle/fastest-first";
  a.throughputs = source_path("data/gavel/simulation_throughputs.json");
  a.prices = source_path("etc/gpu-prices.csv");
  a.out = out;
  return a;
}

}  // namespace

// The whole distribution at the full budget: twelve sources, each held out
// of every training draw of every seed and present in every eval draw.
START_TEST(plan_never_trains_on_the_held_out_source) {
  GeneralizeArgs a;
  a.budget = generalize_budget("full");
  const std::vector<HeldOutPlan> plans = plan_generalize(a);
  ck_assert_int_eq(plans.size(), 12);
  int families = 0;
  for (const HeldOutPlan& p : plans) {
    families += p.is_family;
    ck_assert_int_eq(p.eval.size(), 6);
    for (const ScenarioDraw& d : p.eval) ck_assert_msg(has_source(d, p), "eval of %s without it", p.source.c_str());
    ck_assert_int_eq(p.train.size(), 3);
    for (const auto& [seed, draws] : p.train) {
      ck_assert_int_eq(draws.size(), 12);
      for (const ScenarioDraw& d : draws)
        ck_assert_msg(!has_source(d, p), "seed %llu trains on held-out %s (%s/%s)",
                      static_cast<unsigned long long>(seed), p.source.c_str(), d.family.c_str(), d.workload.c_str());
    }
  }
  ck_assert_int_eq(families, 6);
  // Deterministic, and a source's scenarios do not depend on the others run with it.
  a.sources = {"philly-vc"};
  const std::vector<HeldOutPlan> one = plan_generalize(a);
  const HeldOutPlan& full = *std::find_if(plans.begin(), plans.end(), [](auto& p) { return p.source == "philly-vc"; });
  ck_assert_int_eq(one.size(), 1);
  for (const auto& [seed, draws] : full.train)
    for (size_t i = 0; i < draws.size(); ++i) {
      ck_assert_str_eq(one[0].train.at(seed)[i].family.c_str(), draws[i].family.c_str());
      ck_assert_str_eq(one[0].train.at(seed)[i].workload.c_str(), draws[i].workload.c_str());
      ck_assert_uint_eq(one[0].train.at(seed)[i].seed, draws[i].seed);
    }
}
END_TEST

START_TEST(plan_rejects_unknown_and_empty) {
  GeneralizeArgs a;
  a.sources = {"nosuch"};
  bool threw = false;
  try {
    plan_generalize(a);
  } catch (const std::invalid_argument&) { threw = true; }
  ck_assert(threw);
  // Holding out the only family leaves nothing to train on.
  a.sources = {"small"};
  a.families = {"small"};
  threw = false;
  try {
    plan_generalize(a);
  } catch (const std::invalid_argument&) { threw = true; }
  ck_assert(threw);
}
END_TEST

// Without --policies the baselines are the philly protocol's non-oracle pairs,
// each followed by its "-wait" variant where the placement has one; a
// --policies list is taken as given, oracles left out.
START_TEST(default_baselines_include_wait_variants) {
  GeneralizeArgs a;
  const auto pairs = generalize_baseline_pairs(a);
  auto at = [&](const std::string& o, const std::string& p) {
    return std::find(pairs.begin(), pairs.end(), std::make_pair(o, p)) - pairs.begin();
  };
  const auto n = static_cast<std::ptrdiff_t>(pairs.size());
  ck_assert_int_lt(at("gittins", "best-fit"), n);
  ck_assert_int_eq(at("gittins", "best-fit-wait"), at("gittins", "best-fit") + 1);
  ck_assert_int_eq(at("gavel-las", "type-affinity-wait"), at("gavel-las", "type-affinity") + 1);
  ck_assert_int_lt(at("qssf", "random"), n);
  ck_assert_int_eq(at("qssf", "random-wait"), n);  // random has no -wait variant
  ck_assert_int_eq(at("srtf-oracle", "fastest-first"), n);
  ck_assert_int_eq(at("srtf-oracle", "fastest-first-wait"), n);
  a.policies = "gittins/best-fit,srtf-oracle/fastest-first";
  const auto given = generalize_baseline_pairs(a);
  ck_assert_int_eq(given.size(), 1);
  ck_assert(given[0] == std::make_pair(std::string("gittins"), std::string("best-fit")));
  a.policies = "srtf-oracle/fastest-first";
  bool threw = false;
  try {
    generalize_baseline_pairs(a);
  } catch (const std::invalid_argument&) { threw = true; }
  ck_assert(threw);
}
END_TEST

// A run at a tiny budget on a two-by-two distribution.
START_TEST(run_trains_without_the_source_and_reports_one_row_each) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("duet-generalize-" + std::to_string(getpid()))).string();
  const GeneralizeArgs a = tiny(out);
  const std::vector<HeldOutResult> rs = run_generalize(a);
  ck_assert_int_eq(rs.size(), 4);
  for (const HeldOutResult& r : rs) {
    const HeldOutPlan& p = r.plan;
    // What each seed's chain actually trained on, as it wrote it down.
    for (uint64_t seed : a.seeds) {
      std::ifstream list(out + "/" + p.source + "/seed" + std::to_string(seed) + "/train-scenarios.txt");
      int n = 0;
      for (std::string f, w, s; list >> f >> w >> s; ++n)
        ck_assert_msg((p.is_family ? f : w) != p.source, "%s: trained on %s/%s", p.source.c_str(), f.c_str(),
                      w.c_str());
      ck_assert_int_eq(n, a.budget.train_scenarios);
      ck_assert(std::filesystem::exists(out + "/" + p.source + "/seed" + std::to_string(seed) + "/stage2.model"));
    }
    ck_assert_int_eq(r.baselines.size(), 2);  // srtf-oracle left out
    for (const std::string& b : r.baselines) ck_assert(b.find("oracle") == std::string::npos);
    ck_assert_int_eq(r.duet.size(), 3);
    for (const auto& [seed, runs] : r.duet) ck_assert_int_eq(runs.size(), 2);
    const HeldOutSummary s = summarize(r);
    ck_assert(!s.best.empty());
    ck_assert(s.jct_ratio.at(s.median_seed) > 0);
  }
  const std::string md = slurp(out + "/summary.md");
  for (const char* src : {"small", "gavel", "lognormal", "heavy-tail"}) {
    const std::string row = std::string("\n| ") + src + " | ";
    const size_t at = md.find(row);
    ck_assert_msg(at != std::string::npos, "no row for %s", src);
    ck_assert_msg(md.find(row, at + 1) == std::string::npos, "two rows for %s", src);
  }
  ck_assert(md.find("mean over 4 held-out sources") != std::string::npos);
  ck_assert(md.find("≤ 0.85x") != std::string::npos);
  // Deterministic given the seeds: one source again gives the same ratios.
  GeneralizeArgs again = tiny(out + "-again");
  again.sources = {"heavy-tail"};
  const std::vector<HeldOutResult> r2 = run_generalize(again);
  const HeldOutSummary s1 = summarize(rs[3]), s2 = summarize(r2[0]);
  ck_assert_str_eq(rs[3].plan.source.c_str(), "heavy-tail");
  for (const auto& [seed, x] : s1.jct_ratio) ck_assert_double_eq(x, s2.jct_ratio.at(seed));
  std::filesystem::remove_all(out);
  std::filesystem::remove_all(out + "-again");
}
END_TEST

// --spread-sets reaches every training stage; the models keep the rule, so
// duet/duet's evaluation runs follow it.
START_TEST(spread_rule_reaches_training_and_evaluation) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("duet-generalize-tight-" + std::to_string(getpid()))).string();
  GeneralizeArgs a = tiny(out);
  a.sources = {"small"};
  a.seeds = {1};
  a.spread = duet::learn::SpreadSets::tight;
  const std::vector<HeldOutResult> rs = run_generalize(a);
  ck_assert_int_eq(rs.size(), 1);
  ck_assert_int_eq(rs[0].duet.at(1).size(), 2);
  for (const char* stage : {"stage1", "stage2"}) {
    const duet::learn::Model m = duet::learn::load_model(out + "/small/seed1/" + stage + ".model");
    ck_assert_msg(m.spread == duet::learn::SpreadSets::tight, "%s: %s", stage, m.provenance.c_str());
  }
  ck_assert(slurp(out + "/summary.md").find("by the tight rule (duet train --spread-sets tight)") != std::string::npos);
  ck_assert(slurp(out + "/summary.json").find("\"spread_sets\": \"tight\"") != std::string::npos);
  std::filesystem::remove_all(out);
}
END_TEST

int main() {
  Suite* s = suite_create("policy_generalize");
  TCase* tc = tcase_create("generalize");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, plan_never_trains_on_the_held_out_source);
  tcase_add_test(tc, plan_rejects_unknown_and_empty);
  tcase_add_test(tc, default_baselines_include_wait_variants);
  tcase_add_test(tc, run_trains_without_the_source_and_reports_one_row_each);
  tcase_add_test(tc, spread_rule_reaches_training_and_evaluation);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
