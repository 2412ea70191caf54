// A preemptive learned ordering (duet-model(5), PREEMPTION): running jobs are
// ranked with pending ones each decision, under the gated blend of the
// QSSF-like and the discretised LAS prior (order_prior.h). The gate decides
// whether a long-running job gives way to a short new one; a model that is
// not preemptive never preempts; the option survives the model file.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>

#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/order_prior.h"
#include "policy/learn/agents/restart_hold.h"
#include "policy/learn/gp/binary_io.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"
#include "policy/model/cluster_model.h"
#include "policy/model/gavel.h"
#include "policy/sim/simulator.h"
#include "policy/util/gittins_index.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;
using test_support::gavel_table;

namespace {

NamedArray& weight(Model& m, const std::string& name) {
  for (NamedArray& a : m.weights)
    if (a.name == name) return a;
  throw std::invalid_argument("no weights " + name);
}

// An untrained model whose network adds the same score to every job, so the
// prior alone orders; gate_bias sets a preemptive model's LAS (or Gittins)
// weight (sigmoid(gate_bias)); a model that is not preemptive has no gate.
std::shared_ptr<const Model> prior_only(bool preemptive, float gate_bias, std::uint32_t kind = kPreemptLas) {
  NetConfig nc;
  nc.ordering.preemptive = preemptive ? kind : 0;
  Model m = make_initial_model(nc, GpHyper{}, 3);
  for (float& x : weight(m, "ordering.head2.weight").data) x = 0;
  if (preemptive) weight(m, "ordering.gate.bias").data[0] = gate_bias;
  return std::make_shared<const Model>(std::move(m));
}

struct Outcome {
  SimResult r;
  std::map<int64_t, double> jct;
};

// One 1-GPU machine, --ideal (a restart costs nothing). Job 1 (10,000 s)
// arrives at 0, job 2 (100 s) at 4,000: job 1 has 4,000 GPU-seconds, past
// Tiresias' first queue (3,250); job 2 has none. Its predicted remaining
// GPU time (no history: the 1 h prior) is 0 for job 1, 1 h for job 2.
Outcome run_long_then_short(std::shared_ptr<const Model> m, int second_at = 4000, int first_s = 10000,
                            const DuetPolicyOptions& opt = {}, const SimOptions::PreemptLimits& limits = {}) {
  std::istringstream ts("job_id,submit,duration,num_gpus\n1,0," + std::to_string(first_s) + ",1\n2," +
                        std::to_string(second_at) + ",100,1\n");
  std::istringstream cs("machine,gpu_type,num_gpus\nm,V100,1\n");
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  o.model.ideal = true;
  o.preempt_limits = limits;
  Simulator sim(t, c, gavel_table(), nullptr, o);
  auto ord = make_duet_ordering(m, opt);
  auto pl = make_duet_placement(m);
  sim.set_policies(ord.get(), pl.get());
  struct Rec : SimObserver {
    Outcome* out;
    void on_finish(const JobView& j, double now) override { out->jct[j.id] = now - j.submit_s; }
  } rec;
  Outcome out;
  rec.out = &out;
  sim.set_observer(&rec);
  out.r = sim.run();
  return out;
}

}  // namespace

START_TEST(las_prior_preempts_long_job_for_short_new_one) {
  Outcome o = run_long_then_short(prior_only(true, 20.0f));  // gate ~1: LAS
  ck_assert_int_eq(o.r.preemptions, 1);
  ck_assert_double_eq_tol(o.jct[2], 100, 1e-6);
  ck_assert_double_eq_tol(o.jct[1], 10100, 1e-6);
}
END_TEST

// The Gittins prior with no history: both jobs log-normal with the 1 h
// prior median and spread 1.5, whose rank grows past the median. At 4,000 s
// job 1's rank (about 7,200 s) halved by the running credit is below a new
// job's (about 4,600 s): job 2 waits until job 1's rank passes twice its
// own (some 7,500 s run), then takes the GPU at a periodic decision. At
// 12,000 s job 1's rank (about 13,300 s) halved is above at once.
START_TEST(gittins_prior_preempts_once_the_running_job_is_far_past_its_median) {
  Outcome later = run_long_then_short(prior_only(true, 20.0f, kPreemptGittins), 4000, 20000);
  ck_assert_int_eq(later.r.preemptions, 1);
  ck_assert_msg(later.jct[2] > 2000 && later.jct[2] < 5000, "job 2 took %.0f s", later.jct[2]);
  ck_assert_double_eq_tol(later.jct[1], 20100, 1e-6);
  Outcome now = run_long_then_short(prior_only(true, 20.0f, kPreemptGittins), 12000, 20000);
  ck_assert_int_eq(now.r.preemptions, 1);
  ck_assert_double_eq_tol(now.jct[2], 100, 1e-6);
  ck_assert_double_eq_tol(now.jct[1], 20100, 1e-6);
}
END_TEST

START_TEST(gittins_level_is_the_rank_in_gpu_hours) {
  std::vector<float> row(kJobFeatures, 0.f);
  row[8] = static_cast<float>(std::log1p(60.0));  // median 1 h
  row[9] = 1.5f;
  row[0] = static_cast<float>(std::log1p(4.0));  // 4 GPUs
  const double rank_h = 4 * gittins_rank_s(3600, 1.5, 0) / 3600;
  ck_assert_float_eq_tol(gittins_level(row), static_cast<float>(std::log1p(rank_h)), 1e-4);
  row[7] = 1;  // running: half its rank
  ck_assert_float_eq_tol(gittins_level(row), static_cast<float>(std::log1p(rank_h * kGittinsRunningCredit)), 1e-4);
  ck_assert_float_eq(second_prior(kPreemptGittins, row), gittins_level(row));
  ck_assert_float_eq(second_prior(kPreemptLas, row), las_level(row));
  row[8] = NAN;
  ck_assert(std::isfinite(gittins_level(row)));
  ck_assert_uint_eq(preemptive_prior("gittins"), kPreemptGittins);
  ck_assert_uint_eq(preemptive_prior("las"), kPreemptLas);
  bool threw = false;
  try {
    preemptive_prior("srpt");
  } catch (const std::invalid_argument& e) {
    threw = std::string(e.what()).find("las or gittins") != std::string::npos;
  }
  ck_assert(threw);
}
END_TEST

START_TEST(qssf_side_of_the_gate_keeps_the_running_job) {
  Outcome o = run_long_then_short(prior_only(true, -20.0f));  // gate ~0: QSSF-like
  ck_assert_int_eq(o.r.preemptions, 0);
  ck_assert_double_eq_tol(o.jct[1], 10000, 1e-6);
  ck_assert_double_eq_tol(o.jct[2], 6100, 1e-6);
}
END_TEST

START_TEST(model_that_is_not_preemptive_never_preempts) {
  auto m = prior_only(false, 0);
  ck_assert(!make_duet_ordering(m)->preemptive());
  ck_assert(make_duet_ordering(prior_only(true, 0))->preemptive());
  Outcome o = run_long_then_short(m);
  ck_assert_int_eq(o.r.preemptions, 0);
  ck_assert_double_eq_tol(o.jct[2], 6100, 1e-6);
}
END_TEST

// duet sim --no-preemption, as priority/duet with Preemption=off: the LAS
// prior that preempts job 1 above ranks pending jobs only.
START_TEST(preemption_off_ranks_pending_jobs_only) {
  DuetPolicyOptions off;
  off.preemption = false;
  ck_assert(!make_duet_ordering(prior_only(true, 20.0f), off)->preemptive());
  Outcome o = run_long_then_short(prior_only(true, 20.0f), 4000, 10000, off);
  ck_assert_int_eq(o.r.preemptions, 0);
  ck_assert_double_eq_tol(o.jct[1], 10000, 1e-6);
  ck_assert_double_eq_tol(o.jct[2], 6100, 1e-6);
}
END_TEST

// duet sim --preempt-min-run-time, as duet.conf's PreemptMinRunTime: job 1
// is not preempted before it has run 5,000 s, so job 2 starts at the first
// periodic decision after that (5,100 s); --preempt-max-restarts 1 lets that
// first preemption through. A minimum run longer than job 1 keeps it.
START_TEST(preempt_limits_hold_the_running_job) {
  SimOptions::PreemptLimits lim;
  lim.min_run_s = 5000;
  lim.max_restarts = 1;
  Outcome o = run_long_then_short(prior_only(true, 20.0f), 4000, 10000, {}, lim);
  ck_assert_int_eq(o.r.preemptions, 1);
  ck_assert_double_eq_tol(o.jct[2], 1200, 1e-6);
  ck_assert_double_eq_tol(o.jct[1], 10100, 1e-6);
  lim.max_restarts = 0;
  lim.min_run_s = 20000;  // longer than job 1: never preempted
  o = run_long_then_short(prior_only(true, 20.0f), 4000, 10000, {}, lim);
  ck_assert_int_eq(o.r.preemptions, 0);
  ck_assert_double_eq_tol(o.jct[2], 6100, 1e-6);
}
END_TEST

// Inside a queue a running job stays ahead of a pending one (no churn), and
// queues order before the QSSF-like term when the gate is on LAS.
START_TEST(las_level_queues_and_running_credit) {
  std::vector<float> row(kJobFeatures, 0.f);
  ck_assert_float_eq(las_level(row), 0.f);
  row[7] = 1;  // running
  ck_assert_float_eq(las_level(row), -kLasQueueStep * kLasRunningCredit);
  row[5] = static_cast<float>(std::log1p(3000.0 / 3600));  // still queue 0
  ck_assert_float_eq(las_level(row), -kLasQueueStep * kLasRunningCredit);
  row[5] = static_cast<float>(std::log1p(5000.0 / 3600));  // queue 1
  ck_assert_float_eq(las_level(row), kLasQueueStep * (1 - kLasRunningCredit));
  row[7] = 0;
  row[5] = static_cast<float>(std::log1p(9000.0 / 3600));  // queue 2
  ck_assert_float_eq(las_level(row), 2 * kLasQueueStep);
  std::vector<float> s(1, 0.f);
  row[kJobRemainingGpuHours] = 1.f;
  add_blended_order_prior(kPreemptLas, row, s, 2.0, 0.25f);
  ck_assert_float_eq_tol(s[0], -2.0f * (0.75f * 1.f + 0.25f * 2 * kLasQueueStep), 1e-6);
}
END_TEST

// The restart hold (restart_hold.h): on a 4-GPU cluster job 1 (4 GPUs)
// runs, then is preempted for job 2. While the pending jobs ask for more
// GPUs than are free, job 1 is left out of the ranking for kRestartHoldS
// after the call that saw it preempted, unless what is ranked above it
// leaves its GPUs; job 3, never preempted, stays ranked.
START_TEST(restart_hold_keeps_a_just_preempted_job_from_filling) {
  auto job = [](int64_t id, int gpus, bool running) {
    JobView j;
    j.id = id;
    j.gpus = gpus;
    j.running = running;
    return j;
  };
  auto at = [](double t, int free) {
    ClusterView c;
    c.now_s = t;
    c.total_gpus = 4;
    c.free_gpus = free;
    return c;
  };
  RestartHold hold;
  std::vector<JobView> before = {job(1, 4, true), job(2, 4, false)};
  std::vector<size_t> order = {0, 1};
  hold.apply(before, at(0, 0), order);
  ck_assert_uint_eq(order.size(), 2);
  // Job 2 runs, 1 and 3 pend: 1 is held, 3 is not.
  std::vector<JobView> after = {job(1, 4, false), job(2, 4, true), job(3, 2, false)};
  order = {1, 2, 0};
  hold.apply(after, at(10, 0), order);
  ck_assert_uint_eq(order.size(), 2);
  ck_assert_uint_eq(order[0], 1);
  ck_assert_uint_eq(order[1], 2);
  // Ranked first it is kept: not held.
  order = {0, 1, 2};
  hold.apply(after, at(20, 0), order);
  ck_assert_uint_eq(order.size(), 3);
  // Every pending job fits the free GPUs: nobody is displaced, none held.
  order = {1, 2, 0};
  hold.apply(after, at(30, 8), order);
  ck_assert_uint_eq(order.size(), 3);
  // One second short of the hold it is still held; at the hold it is not.
  order = {1, 2, 0};
  hold.apply(after, at(10 + kRestartHoldS - 1, 0), order);
  ck_assert_uint_eq(order.size(), 2);
  order = {1, 2, 0};
  hold.apply(after, at(10 + kRestartHoldS, 0), order);
  ck_assert_uint_eq(order.size(), 3);
}
END_TEST

START_TEST(model_file_round_trips_the_option) {
  const auto dir = std::filesystem::temp_directory_path() / ("duet-preempt-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string pre = (dir / "pre.model").string(), plain = (dir / "plain.model").string();
  auto p = prior_only(true, 1.25f);
  save_model(*p, pre);
  save_model(*prior_only(false, 0), plain);
  const Model back = load_model(pre);
  ck_assert_uint_eq(back.nets.ordering.preemptive, 1);
  ck_assert_float_eq(back.weight("ordering.gate.bias").data.at(0), 1.25f);
  ck_assert_uint_eq(back.weight("ordering.gate.weight").data.size(), 2 * 32 + kClusterFeatures);
  ck_assert_uint_eq(model_version(back), kModelVersionPreemptive);
  ck_assert_uint_eq(load_model(plain).nets.ordering.preemptive, 0);
  const std::string git = (dir / "gittins.model").string();
  save_model(*prior_only(true, 1.25f, kPreemptGittins), git);
  ck_assert_uint_eq(load_model(git).nets.ordering.preemptive, kPreemptGittins);
  ck_assert_uint_eq(read_container_versions(git, std::string_view(kModelMagic, 8), 1, 9, "m").version, 2);
  // A model that is not preemptive is still written as format 1, the format
  // older builds read; a preemptive one is format 2, which they refuse.
  ck_assert_uint_eq(read_container_versions(plain, std::string_view(kModelMagic, 8), 1, 9, "m").version, 1);
  ck_assert_uint_eq(read_container_versions(pre, std::string_view(kModelMagic, 8), 1, 9, "m").version, 2);
  bool refused = false;
  try {
    read_container(pre, std::string_view(kModelMagic, 8), kModelVersion, "duet model file");
  } catch (const FormatError& e) {
    refused = std::string(e.what()).find("format version 2, this build reads version 1") != std::string::npos;
  }
  ck_assert(refused);
  std::filesystem::remove_all(dir);
}
END_TEST

int main() {
  Suite* s = suite_create("learn_preempt");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, las_prior_preempts_long_job_for_short_new_one);
  tcase_add_test(tc, qssf_side_of_the_gate_keeps_the_running_job);
  tcase_add_test(tc, gittins_prior_preempts_once_the_running_job_is_far_past_its_median);
  tcase_add_test(tc, gittins_level_is_the_rank_in_gpu_hours);
  tcase_add_test(tc, model_that_is_not_preemptive_never_preempts);
  tcase_add_test(tc, preemption_off_ranks_pending_jobs_only);
  tcase_add_test(tc, preempt_limits_hold_the_running_job);
  tcase_add_test(tc, las_level_queues_and_running_credit);
  tcase_add_test(tc, restart_hold_keeps_a_just_preempted_job_from_filling);
  tcase_add_test(tc, model_file_round_trips_the_option);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
