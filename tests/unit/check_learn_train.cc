// duet train: a short run on a tiny, contended trace improves the greedy mean
// JCT over its untrained start (fixed seed), writes a valid model, a learning
// curve, and resumes.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"
#include "policy/learn/train/trainer.h"
#include "policy/model/cluster_model.h"
#include "policy/model/gavel.h"
#include "tests/unit/test_data.h"
#include "tests/unit/train_fixtures.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;
using namespace test_support;

START_TEST(training_improves_over_untrained_start) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  Trace trace = tiny_trace();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  TrainOptions o;
  o.out = (dir / "m.duet").string();
  o.seed = 3;
  o.episodes = 2;
  o.bc_episodes = 2;
  o.bc_epochs = 15;
  o.eval_every = 1;
  o.window_jobs = 400;
  TrainReport r = train(trace, cluster, table, nullptr, o);
  ck_assert(std::isfinite(r.initial_jct_s) && r.initial_jct_s > 0);
  ck_assert_msg(r.final_jct_s < r.initial_jct_s, "trained %.1f s, untrained %.1f s", r.final_jct_s, r.initial_jct_s);
  Model m = load_model(o.out);  // valid file
  ck_assert(!m.provenance.empty());
  std::ifstream csv(o.out + ".csv");
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  ck_assert_int_ge(rows, 1 + 2 + 2);  // header, bc rows, ppo rows
  o.resume = true;
  o.episodes = 1;
  TrainReport r2 = train(trace, cluster, table, nullptr, o);
  ck_assert_int_eq(r2.episodes_done, 3);
  ck_assert(r2.final_jct_s <= r.final_jct_s + 1e-9);
  std::filesystem::remove_all(dir);
}
END_TEST

// --agents order / place: the fixed agent's weights stay the seeded initial
// ones, the trained agent's change (and --keep last writes the last checkpoint).
static bool same_prefix(const Model& a, const Model& b, const std::string& prefix) {
  for (const NamedArray& w : a.weights)
    if (w.name.rfind(prefix, 0) == 0 && w.data != b.weight(w.name).data) return false;
  return true;
}

START_TEST(one_agent_trains_the_other_stays_fixed) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  Trace trace = tiny_trace();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-agents-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Model init = make_initial_model(NetConfig{}, GpHyper{}, 5);
  for (TrainAgents a : {TrainAgents::order, TrainAgents::place}) {
    TrainOptions o;
    o.out = (dir / (std::string(train_agents_name(a)) + ".duet")).string();
    o.seed = 5;
    o.episodes = 2;
    o.bc_episodes = 1;
    o.bc_epochs = 3;
    o.eval_every = 1;
    o.agents = a;
    o.keep_last = true;
    train(trace, cluster, table, nullptr, o);
    const Model m = load_model(o.out);
    ck_assert(m.provenance.find(std::string("--agents ") + train_agents_name(a)) != std::string::npos);
    const bool order = a == TrainAgents::order;
    ck_assert_msg(same_prefix(m, init, order ? "placement." : "ordering."), "the fixed agent changed");
    ck_assert_msg(!same_prefix(m, init, order ? "ordering." : "placement."), "the trained agent did not change");
    ck_assert(!same_prefix(m, init, "critic."));
  }
  ck_assert(parse_train_agents("place") == TrainAgents::place);
  bool threw = false;
  try {
    parse_train_agents("critic");
  } catch (const std::invalid_argument& e) {
    threw = std::string(e.what()).find("both, order or place") != std::string::npos;
  }
  ck_assert(threw);
  std::filesystem::remove_all(dir);
}
END_TEST

// --init: training starts from the given model (fine-tuning), so the fixed
// agent keeps that model's weights, not the seeded initial ones.
START_TEST(init_starts_from_the_given_model) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-init-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const Model base = make_initial_model(NetConfig{}, GpHyper{}, 9);
  save_model(base, (dir / "base.duet").string());
  TrainOptions o;
  o.out = (dir / "tuned.duet").string();
  o.init = (dir / "base.duet").string();
  o.seed = 5;
  o.episodes = 1;
  o.bc_episodes = 0;
  o.eval_every = 1;
  o.agents = TrainAgents::order;
  o.keep_last = true;
  train(tiny_trace(), cluster, table, nullptr, o);
  const Model m = load_model(o.out);
  ck_assert_msg(same_prefix(m, base, "placement."), "the fixed agent does not keep the --init model's weights");
  ck_assert(!same_prefix(m, base, "ordering."));
  ck_assert(m.provenance.find("--init") != std::string::npos);
  std::filesystem::remove_all(dir);
}
END_TEST

// --preemptive: the seeded model's ordering is preemptive, the trainer's
// rollouts preempt as the simulator's agent does (the same prior and rule),
// and PPO moves the gate that blends the two priors.
START_TEST(preemptive_model_trains_its_gate) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-pre-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  TrainOptions o;
  o.out = (dir / "pre.duet").string();
  o.seed = 4;
  o.episodes = 2;
  o.bc_episodes = 0;
  o.eval_every = 1;
  o.keep_last = true;
  o.preemptive = true;
  TrainReport r = train(tiny_trace(), cluster, table, nullptr, o);
  ck_assert(std::isfinite(r.final_jct_s) && r.final_jct_s > 0);
  const Model m = load_model(o.out);
  ck_assert_uint_eq(m.nets.ordering.preemptive, 1);
  ck_assert(m.provenance.find("--preemptive") != std::string::npos);
  const Model start = make_initial_model(m.nets, GpHyper{}, o.seed);
  ck_assert_msg(!same_prefix(m, start, "ordering.gate."), "PPO did not move the gate");
  std::filesystem::remove_all(dir);
}
END_TEST

// --update-passes: a cap at or above an episode's passes learns from all of
// them (the same model as no cap); a small cap learns from a random subset
// of each epoch's passes (another model, still a valid one).
START_TEST(update_passes_cap_samples_passes) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-cap-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](int cap) {
    TrainOptions o;
    o.out = (dir / ("cap" + std::to_string(cap) + ".duet")).string();
    o.seed = 5;
    o.episodes = 1;
    o.bc_episodes = 1;
    o.bc_epochs = 2;
    o.eval_every = 1;
    o.keep_last = true;
    o.preemptive = true;
    o.max_update_passes = cap;
    train(tiny_trace(), cluster, table, nullptr, o);
    return load_model(o.out);
  };
  const Model all = run(0), above = run(1000000), few = run(4);
  ck_assert_msg(same_prefix(all, above, ""), "a cap above the episode's passes changed the weights");
  ck_assert_msg(!same_prefix(all, few, "ordering."), "a cap of 4 passes trained the same ordering as all passes");
  ck_assert_uint_eq(few.nets.ordering.preemptive, 1);
  ck_assert(few.provenance.find("--update-passes 4") != std::string::npos);
  std::filesystem::remove_all(dir);
}
END_TEST

// A short run: one PPO episode, no warm start, its last checkpoint kept.
static TrainOptions one_episode(const std::filesystem::path& out, std::uint64_t seed) {
  TrainOptions o;
  o.out = out.string();
  o.seed = seed;
  o.episodes = 1;
  o.bc_episodes = 0;
  o.eval_every = 1;
  o.keep_last = true;
  return o;
}

// The variance of a model's ordering residual (the network's scores, without
// the prior) over a queue like the tiny trace's: 4-GPU and 1-GPU jobs of two
// users, some running, on the tiny cluster.
static double residual_variance(const Model& m) {
  std::vector<std::string> types = {"V100"};
  std::vector<MachineView> ms = {{"m0", 0, 4, 1, 0, 1.0, 0}, {"m1", 0, 4, 2, 0, 1.0, 0}};
  ClusterView c{3600, types, ms, 8, 3, 0};
  const ClusterSummary sum = summarise(c);
  JobHistory h;
  std::vector<JobView> q(12);
  for (std::size_t i = 0; i < q.size(); ++i) {
    q[i].gpus = i % 4 == 0 ? 4 : 1;
    q[i].wait_s = 60.0 * static_cast<double>(i);
    q[i].running = i % 3 == 0;
    q[i].run_s = q[i].running ? 120.0 * static_cast<double>(i) : 0;
    q[i].attained_gpu_s = q[i].run_s * q[i].gpus;
  }
  std::vector<float> rows, cluster, scores;
  job_feature_rows(q, sum, h, rows);
  cluster_features(c, q, sum, cluster);
  OrderingAgent(m).score(rows, q.size(), cluster, {}, scores);
  double mean = 0, sq = 0;
  for (float v : scores) mean += v;
  mean /= static_cast<double>(scores.size());
  for (float v : scores) sq += (v - mean) * (v - mean);
  return sq / static_cast<double>(scores.size());
}

// --anchor: a Gittins-prior model starts as its prior (the ordering head's
// last layer at zero: no residual); PPO gives it a residual, and the anchor,
// which charges the residual's variance over each queue, keeps it much
// smaller for the same seed and episodes.
START_TEST(anchor_keeps_the_residual_near_the_prior) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-anchor-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto trained = [&](double anchor) {
    TrainOptions o = one_episode(dir / ("a" + std::to_string(static_cast<int>(anchor)) + ".duet"), 7);
    o.episodes = o.eval_every = 3;
    o.preemptive = kPreemptGittins;
    o.anchor = anchor;
    train(tiny_trace(), cluster, table, nullptr, o);
    const Model m = load_model(o.out);
    ck_assert((anchor > 0) == (m.provenance.find("--anchor 1000") != std::string::npos));
    return m;
  };
  const Model free = trained(0), anchored = trained(1000);
  const double vf = residual_variance(free), va = residual_variance(anchored);
  ck_assert_msg(vf > 0, "PPO gave the ordering no residual");
  ck_assert_msg(va < 0.25 * vf, "the anchored residual's variance is %g, %g without the anchor", va, vf);
  std::filesystem::remove_all(dir);
}
END_TEST

// --spread-sets learned: on a cluster of 2-GPU machines of two speeds every
// 4-GPU job is spread, and the placement agent's first machine for it is
// chosen among all machines (not only the fastest that hold it), so the
// rollouts, and the placement weights trained from them, differ from the
// fastest rule's; the provenance names the rule.
START_TEST(learned_spread_sets_train_the_first_machine) {
  const ThroughputTable& table = gavel_table();
  std::istringstream cs("machine,gpu_type,num_gpus,rack\nv0,V100,2,r0\nv1,V100,2,r0\nk0,K80,2,r0\nk1,K80,2,r0\n");
  const ClusterModel cluster = build_cluster(read_cluster(cs, "cluster"), table);
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-spread-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](SpreadSets rule) {
    TrainOptions o = one_episode(dir / (std::string(spread_sets_name(rule)) + ".duet"), 6);
    o.agents = TrainAgents::place;
    o.spread = rule;
    TrainReport r = train(tiny_trace(), cluster, table, nullptr, o);
    ck_assert(std::isfinite(r.final_jct_s) && r.final_jct_s > 0);
    return load_model(o.out);
  };
  const Model fastest = run(SpreadSets::fastest), learned = run(SpreadSets::learned);
  ck_assert_msg(!same_prefix(fastest, learned, "placement."), "the learned rule trained the same placement weights");
  ck_assert(learned.provenance.find("--spread-sets learned") != std::string::npos);
  ck_assert(fastest.provenance.find("--spread-sets") == std::string::npos);
  // The model keeps its rule; fine-tuning it without --spread-sets keeps it too.
  ck_assert(learned.spread == SpreadSets::learned && fastest.spread == SpreadSets::fastest);
  TrainOptions o = one_episode(dir / "tuned.duet", 6);
  o.agents = TrainAgents::place;
  o.init = (dir / "learned.duet").string();
  train(tiny_trace(), cluster, table, nullptr, o);
  ck_assert(load_model(o.out).spread == SpreadSets::learned);
  std::filesystem::remove_all(dir);
}
END_TEST

// A rollout whose record of decisions outgrows the limit stops the run with
// an error that names the cause and the way out, instead of growing until
// the host runs out of memory; the limit set high, the same run trains.
START_TEST(rollout_past_its_byte_limit_stops_with_a_clear_error) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-limit-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  TrainOptions o = one_episode(dir / "m.duet", 3);
  o.rollout_byte_limit = 20000;
  std::string what;
  try {
    train(tiny_trace(), cluster, table, nullptr, o);
  } catch (const std::runtime_error& e) { what = e.what(); }
  ck_assert_msg(what.find("too congested to train on in memory") != std::string::npos, "got '%s'", what.c_str());
  ck_assert_msg(what.find("--window") != std::string::npos, "got '%s'", what.c_str());
  o.rollout_byte_limit = std::size_t{1} << 30;
  TrainReport r = train(tiny_trace(), cluster, table, nullptr, o);
  ck_assert_int_eq(r.episodes_done, 1);
  std::filesystem::remove_all(dir);
}
END_TEST

// duet train's --period reaches the rollouts and evaluations (it was read
// and ignored): a preemptive model decides every period, so another period
// is other passes and other weights; the same period, the same weights.
START_TEST(period_reaches_the_rollouts) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-period-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](double period, const char* name) {
    TrainOptions o = one_episode(dir / name, 4);
    o.preemptive = true;
    o.period_s = period;
    train(tiny_trace(), cluster, table, nullptr, o);
    return load_model(o.out);
  };
  const Model a = run(300, "a.duet"), b = run(300, "b.duet"), c = run(60, "c.duet");
  ck_assert_msg(same_prefix(a, b, ""), "the same options trained other weights");
  ck_assert_msg(!same_prefix(a, c, "ordering."), "--period 60 trained the same ordering as 300");
  ck_assert(c.provenance.find("--period 60") != std::string::npos);
  ck_assert(a.provenance.find("--period") == std::string::npos);
  std::filesystem::remove_all(dir);
}
END_TEST

// preemption = false (duet train --no-preemption, duet.conf Preemption=off):
// a preemptive model's rollouts preempt nothing, as the plugins run it;
// with preemption on, the same run preempts. Each episode reports itself.
START_TEST(preemption_off_preempts_nothing) {
  const ThroughputTable& table = gavel_table();
  const ClusterModel cluster = tiny_cluster();
  const auto dir = std::filesystem::temp_directory_path() / ("duet-train-nopre-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto run = [&](bool preemption, const char* name, std::int64_t* preemptions, int* reports) {
    TrainOptions o = one_episode(dir / name, 4);
    o.episodes = 2;
    o.preemptive = true;
    o.preemption = preemption;
    o.on_episode = [&](const TrainProgress& p) {
      *preemptions += p.preemptions;
      ++*reports;
      ck_assert_int_eq(p.done, *reports);
      ck_assert_int_eq(p.total, 2);
      ck_assert(p.evaluated && p.eval_jct_s > 0 && p.initial_jct_s > 0 && p.reward < 0);
    };
    train(tiny_trace(), cluster, table, nullptr, o);
    return load_model(o.out);
  };
  std::int64_t on = 0, off = 0;
  int on_reports = 0, off_reports = 0;
  const Model a = run(true, "on.duet", &on, &on_reports);
  const Model b = run(false, "off.duet", &off, &off_reports);
  ck_assert_int_eq(on_reports, 2);
  ck_assert_int_eq(off_reports, 2);
  ck_assert_msg(on > 0, "the preemptive model preempted nothing with preemption on");
  ck_assert_int_eq(off, 0);
  ck_assert_uint_eq(b.nets.ordering.preemptive, 1);  // the model stays preemptive
  ck_assert(b.provenance.find("--no-preemption") != std::string::npos);
  ck_assert(a.provenance.find("--no-preemption") == std::string::npos);
  std::filesystem::remove_all(dir);
}
END_TEST

int main() {
  Suite* s = suite_create("learn_train");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 150);
  tcase_add_test(tc, training_improves_over_untrained_start);
  tcase_add_test(tc, one_agent_trains_the_other_stays_fixed);
  tcase_add_test(tc, init_starts_from_the_given_model);
  tcase_add_test(tc, preemptive_model_trains_its_gate);
  tcase_add_test(tc, preemption_off_preempts_nothing);
  tcase_add_test(tc, learned_spread_sets_train_the_first_machine);
  tcase_add_test(tc, rollout_past_its_byte_limit_stops_with_a_clear_error);
  tcase_add_test(tc, period_reaches_the_rollouts);
  tcase_add_test(tc, update_passes_cap_samples_passes);
  tcase_add_test(tc, anchor_keeps_the_residual_near_the_prior);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
