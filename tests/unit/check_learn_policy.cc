// The learned "duet" policies behind the policy seam: feature functions,
// duration history, and untrained models that still schedule every job,
// including on GPU types the throughput table does not know.
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "policy/core/policy.h"
#include "policy/io/cluster.h"
#include "policy/io/trace.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/features.h"
#include "policy/learn/agents/machine_set.h"
#include "policy/learn/agents/placement_routine.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/nets/model_init.h"
#include "policy/model/cluster_model.h"
#include "policy/model/gavel.h"
#include "policy/registry/policy_registry.h"
#include "policy/sim/simulator.h"
#include "tests/unit/spread_cluster.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;
using test_support::gavel_table;

static std::shared_ptr<const Model> untrained(uint64_t seed = 7) {
  return std::make_shared<const Model>(make_initial_model(NetConfig{}, GpHyper{}, seed));
}

START_TEST(job_features_values) {
  std::vector<std::string> types = {"V100", "K80"};
  std::vector<MachineView> ms = {{"a", 0, 8, 2, 0, 1.0, 1}, {"b", 1, 4, 4, 0, 0.5, 0}};
  ClusterView c{43200, types, ms, 12, 6, 0};  // noon
  ClusterSummary s = summarise(c);
  ck_assert_int_eq(s.type_total[0], 8);
  ck_assert_int_eq(s.type_free[1], 4);
  JobHistory h;
  JobView j;
  j.gpus = 3;
  j.type_mask = 1u;  // V100 only: 8 of 12 GPUs, 2 free
  j.wait_s = 60;
  std::vector<float> f;
  job_features(j, s, h, f);
  ck_assert_uint_eq(f.size(), kJobFeatures);
  ck_assert_float_eq_tol(f[0], std::log1p(3.0), 1e-6);
  ck_assert_float_eq(f[1], 1.0f);
  ck_assert_float_eq_tol(f[2], 8.0f / 12.0f, 1e-6);
  ck_assert_float_eq(f[3], 0.0f);  // 3 > 2 free V100 GPUs
  ck_assert_float_eq_tol(f[4], std::log1p(1.0), 1e-6);
  ck_assert_float_eq_tol(f[13], -1.0f, 1e-6);  // cos at noon
  ck_assert_float_eq(f[15], 0.0f);             // no time limit
  j.type_mask = 0;
  j.gpus = 4;
  f.clear();
  job_features(j, s, h, f);
  ck_assert_float_eq(f[2], 1.0f);
  ck_assert_float_eq(f[3], 1.0f);
  std::vector<JobView> pending = {j, j};
  std::vector<float> cf;
  cluster_features(c, pending, s, cf);
  ck_assert_uint_eq(cf.size(), kClusterFeatures);
  ck_assert_float_eq_tol(cf[0], 0.5f, 1e-6);
  ck_assert_float_eq_tol(cf[4], 1.0f, 1e-6);
}
END_TEST

START_TEST(history_predicts_from_most_specific_key) {
  JobHistory h(3600, 1.5, 2);
  JobView a;
  a.user = "alice";
  a.vc = "vc1";
  a.gpus = 2;
  ck_assert_double_eq_tol(h.predict(a).duration_s, 3600, 1e-9);  // prior only
  ck_assert_double_eq(h.predict(a).samples, 0);
  h.on_finish(a, 100);
  JobView b = a;
  b.user = "bob";  // same vc
  h.on_finish(b, 10000);
  ck_assert_double_eq_tol(h.predict(a).duration_s, 1000, 1e-6);  // one of alice's: the vc's geometric mean
  ck_assert_double_eq(h.predict(a).samples, 2);
  h.on_finish(a, 100);
  JobView a8 = a;
  a8.gpus = 8;  // alice's jobs of every size pool together
  h.on_finish(a8, 10000);
  h.on_finish(a8, 10000);
  ck_assert_double_eq_tol(h.predict(a).duration_s, 1000, 1e-6);
  ck_assert_double_eq_tol(h.predict(a8).duration_s, 1000, 1e-6);
  ck_assert_double_eq(h.predict(a8).samples, 4);
  JobView d;  // no user or vc: the job type, then everything
  d.job_type = "resnet";
  ck_assert_double_eq(h.predict(d).samples, 5);
  h.on_finish(a, 0);  // ignored
  h.on_finish(a, NAN);
  ck_assert_uint_eq(h.jobs_seen(), 5);
}
END_TEST

// 12 jobs; a 12-GPU job spans machines; "Z1" is unknown to the throughput
// table and known only by its `speed`.
static const char* kTrace =
    "job_id,submit,duration,num_gpus,gpu_type\n"
    "1,0,3600,4,\n2,10,600,1,\n3,20,1200,2,Z1\n4,30,300,1,\n5,40,7200,12,\n6,50,900,2,\n"
    "7,60,1800,1,Z1\n8,70,100,1,\n9,80,2400,4,\n10,90,60,1,\n11,100,5000,8,\n12,110,30,1,Z1\n";
static const char* kCluster =
    "machine,gpu_type,num_gpus,rack,speed\n"
    "m0,V100,8,r0,\nm1,V100,8,r0,\nm2,K80,4,r1,\nz0,Z1,4,r1,0.7\nz1,Z1,2,r2,0.7\n";

static SimResult simulate(OrderingPolicy& o, PlacementPolicy& p, int64_t& finished) {
  std::istringstream ts(kTrace), cs(kCluster);
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions opt;
  opt.model.seed = 3;
  Simulator sim(t, c, gavel_table(), nullptr, opt);
  sim.set_policies(&o, &p);
  struct Count : SimObserver {
    int64_t n = 0;
    void on_finish(const JobView&, double) override { ++n; }
  } count;
  sim.set_observer(&count);
  SimResult r = sim.run();
  finished = count.n;
  return r;
}

START_TEST(untrained_duet_finishes_every_job) {
  auto m = untrained();
  auto o = make_duet_ordering(m);
  auto p = make_duet_placement(m);
  int64_t n = 0;
  SimResult r = simulate(*o, *p, n);
  ck_assert_int_eq(n, 12);
  ck_assert_int_eq(r.jobs, 12);
  ck_assert(std::isfinite(r.avg_jct_s) && r.avg_jct_s > 0);
}
END_TEST

START_TEST(each_agent_with_a_baseline) {
  auto m = untrained(11);
  int64_t n = 0;
  auto o = make_duet_ordering(m);
  auto bf = make_placement("best-fit");
  simulate(*o, *bf, n);
  ck_assert_int_eq(n, 12);
  auto fifo = make_ordering("fifo");
  auto p = make_duet_placement(m);
  simulate(*fifo, *p, n);
  ck_assert_int_eq(n, 12);
}
END_TEST

START_TEST(deterministic_for_a_seed) {
  auto m = untrained(5);
  int64_t n = 0;
  auto o1 = make_duet_ordering(m);
  auto p1 = make_duet_placement(m);
  auto o2 = make_duet_ordering(m);
  auto p2 = make_duet_placement(m);
  SimResult a = simulate(*o1, *p1, n), b = simulate(*o2, *p2, n);
  ck_assert_double_eq(a.avg_jct_s, b.avg_jct_s);
  ck_assert_double_eq(a.makespan_s, b.makespan_s);
}
END_TEST

START_TEST(registry_needs_a_model) {
  bool threw = false;
  try {
    make_ordering("duet");
  } catch (const std::invalid_argument& e) { threw = std::string(e.what()).find("--model") != std::string::npos; }
  ck_assert(threw);
  PolicyContext ctx;
  ctx.model = untrained(2);
  ck_assert(make_ordering("duet", ctx) != nullptr);
  for (const char* n : {"duet", "duet-rbf", "duet-nogp"}) ck_assert(make_placement(n, ctx) != nullptr);
}
END_TEST

START_TEST(placement_uses_gp_and_prefers_fast_machines) {
  auto m = untrained(3);
  DuetPolicyOptions opt;
  opt.prior_weight = 100;  // the prior dominates the untrained head
  auto p = make_duet_placement(m, opt);
  std::vector<std::string> types = {"V100", "Z1"};
  std::vector<MachineView> ms = {{"slow", 1, 4, 4, 0, 0.5, 0}, {"fast", 0, 4, 4, 1, 1.0, 0}};
  ClusterView c{0, types, ms, 8, 8, 0};
  JobView j;
  j.id = 1;
  j.gpus = 2;
  auto where = p->place(j, c);
  ck_assert(where.has_value());
  ck_assert_int_eq((*where)[0].machine, 1);
  j.gpus = 6;  // needs both machines
  where = p->place(j, c);
  ck_assert(where.has_value());
  int total = 0;
  for (auto& part : *where) total += part.gpus;
  ck_assert_int_eq(total, 6);
  j.gpus = 9;  // cannot fit
  ck_assert(!p->place(j, c).has_value());
}
END_TEST

// A job of a known type is placed by its type's speeds (Gavel's table), as
// type-affinity places it: of a K80 and a P100 machine, the K80 one is the
// slower by the types' mean speeds but the faster for a job type that K80
// suits better than the mean job does. duet-type-blind takes the P100.
START_TEST(placement_uses_the_job_types_speeds) {
  const JobTypeSpeeds speeds = job_type_speeds(gavel_table());
  const int k80 = gavel_table().find_gpu("k80"), p100 = gavel_table().find_gpu("p100");
  ck_assert(k80 >= 0 && p100 >= 0);
  std::string type;
  double r = 0;  // the job type's factor on K80 over its factor on P100, the largest
  for (const auto& [name, a] : speeds.affinity)
    if (a[k80] / a[p100] > r) r = a[k80] / a[p100], type = name;
  ck_assert_msg(r > 1.2, "no job type suits K80 better than P100 by 20%% (%g)", r);
  // Known speeds: P100 1.0, K80 1/sqrt(r); for the job: P100 a[p100], K80 a[k80]/sqrt(r), sqrt(r) times faster.
  std::vector<std::string> types = {"P100", "K80"};
  std::vector<MachineView> ms = {{"p", 0, 4, 4, 0, 1.0, 0}, {"k", 1, 4, 4, 0, 1.0 / std::sqrt(r), 0}};
  ClusterView c{0, types, ms, 8, 8, 0};
  JobView j;
  j.id = 1;
  j.gpus = 2;
  j.job_type = type;
  auto m = untrained(3);
  DuetPolicyOptions opt;
  opt.prior_weight = 100;  // the prior dominates the untrained head
  opt.job_speeds = std::make_shared<const JobTypeSpeeds>(speeds);
  auto typed = make_duet_placement(m, opt);
  opt.type_blind = true;
  auto blind = make_duet_placement(m, opt);
  PolicyContext ctx;
  ctx.model = m;
  ctx.throughputs = &gavel_table();
  auto affinity = make_placement("type-affinity", ctx);
  ck_assert_str_eq(make_placement("duet-type-blind", ctx)->name().c_str(), "duet-type-blind");
  ck_assert_int_eq((*affinity->place(j, c))[0].machine, 1);
  ck_assert_int_eq((*typed->place(j, c))[0].machine, 1);
  ck_assert_int_eq((*blind->place(j, c))[0].machine, 0);
  j.job_type = "no such type";  // unknown: the known speeds
  ck_assert_int_eq((*typed->place(j, c))[0].machine, 0);
}
END_TEST

// A job no machine can hold runs at its slowest part's speed: the machine set
// comes from the fastest machines that can hold it together, whatever the
// scores say (here a prior that prefers slow machines).
using test_support::spread_cluster;

// Job `id` of `gpus` GPUs placed by p on spread_cluster().
static std::optional<Placement> place_on_spread_cluster(PlacementPolicy& p, int64_t id, int gpus, double wait_s = 0) {
  static const std::vector<MachineView> ms = spread_cluster();
  std::vector<std::string> types = test_support::kSpreadTypes;
  ClusterView c{0, types, ms, 20, 16, 0};
  JobView j;
  j.id = id;
  j.gpus = gpus;
  j.wait_s = wait_s;
  return p.place(j, c);
}

START_TEST(spread_job_keeps_fastest_floor) {
  const std::vector<MachineView> ms = spread_cluster();
  std::vector<uint32_t> all(ms.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  ck_assert_double_eq(fastest_floor(ms, 4, all), 1.0);            // 3 X100 GPUs + the V100's 2
  ck_assert_double_eq_tol(fastest_floor(ms, 8, all), 0.4, 1e-6);  // needs the T4s too, not the K80
  ck_assert_double_eq(fastest_floor(ms, 20, all), 0.0);           // 17 free in all: no floor
  ck_assert_double_eq(fastest_floor(ms, 3, all), 0.0);            // the K80 holds it alone: no set
  const std::vector<uint32_t> x100s = {0, 1, 2};
  ck_assert_double_eq(fastest_floor(ms, 4, x100s), 0.0);  // only 3 free among these

  DuetPolicyOptions opt;
  opt.prior_weight = -100;  // prefers slow machines
  opt.speed_floor = 0;      // the rules alone (the floor: spread_floor_waits_for_fast_machines)
  auto p = make_duet_placement(untrained(3), opt);
  auto where = place_on_spread_cluster(*p, 1, 4);
  ck_assert(where.has_value());
  int total = 0;
  for (auto& part : *where) {
    ck_assert_msg(ms[part.machine].speed >= 1.0, "4-GPU job got %s (speed %.1f)",
                  std::string(ms[part.machine].name).c_str(), ms[part.machine].speed);
    total += part.gpus;
  }
  ck_assert_int_eq(total, 4);
  where = place_on_spread_cluster(*p, 2, 3);  // the K80 holds it alone: one machine, the scores decide
  ck_assert(where.has_value());
  ck_assert_int_eq(static_cast<int>(where->size()), 1);
}
END_TEST

// The "duet-slow-sets" ablation: the same 4-GPU job from the slowest
// machines (the K80's 3 GPUs and a T4), however strongly the prior prefers
// fast ones; a job one machine holds is placed as before.
START_TEST(slow_sets_spread_over_the_slowest_machines) {
  const std::vector<MachineView> ms = spread_cluster();
  DuetPolicyOptions opt;
  opt.prior_weight = 100;
  opt.speed_floor = 0;
  opt.spread = learn::SpreadSets::slow;
  auto p = make_duet_placement(untrained(3), opt);
  ck_assert_str_eq(p->name().c_str(), "duet-slow-sets");
  auto where = place_on_spread_cluster(*p, 1, 4);
  ck_assert(where.has_value());
  int total = 0;
  bool k80 = false;
  for (auto& part : *where) {
    ck_assert_msg(ms[part.machine].speed <= 0.4, "4-GPU job got %s (speed %.1f)",
                  std::string(ms[part.machine].name).c_str(), ms[part.machine].speed);
    k80 = k80 || part.machine == 12;
    total += part.gpus;
  }
  ck_assert(k80);
  ck_assert_int_eq(total, 4);
  where = place_on_spread_cluster(*p, 2, 2);  // the V100 holds it alone: the prior's fastest that holds it
  ck_assert(where.has_value() && where->size() == 1);
  ck_assert_int_eq((*where)[0].machine, 3);
}
END_TEST

// The "duet-tight-sets" ablation: the same speed floor as the model's rule
// (1.0, so the job runs as fast), but the V100's 2 GPUs first and only then
// the X100s, however strongly the prior prefers fast machines: one X100 stays
// free for a small job.
START_TEST(tight_sets_take_the_slowest_machines_above_the_floor) {
  const std::vector<MachineView> ms = spread_cluster();
  DuetPolicyOptions opt;
  opt.prior_weight = 100;
  opt.speed_floor = 0;
  opt.spread = learn::SpreadSets::tight;
  auto p = make_duet_placement(untrained(3), opt);
  ck_assert_str_eq(p->name().c_str(), "duet-tight-sets");
  auto where = place_on_spread_cluster(*p, 1, 4);
  ck_assert(where.has_value());
  int total = 0, x100 = 0, v100 = 0;
  for (auto& part : *where) {
    ck_assert_msg(ms[part.machine].speed >= 1.0, "4-GPU job got %s (speed %.1f)",
                  std::string(ms[part.machine].name).c_str(), ms[part.machine].speed);
    (part.machine == 3 ? v100 : x100) += part.gpus;
    total += part.gpus;
  }
  ck_assert_int_eq(total, 4);
  ck_assert_int_eq(v100, 2);
  ck_assert_int_eq(x100, 2);
  ck_assert_double_eq(placement_speed(ms, *where), 1.0);

  // A model that keeps the rule (duet train --spread-sets tight) follows it
  // in its plain "duet" placement; "duet-fastest-sets" overrides it.
  auto tight = std::make_shared<Model>(*untrained(3));
  tight->spread = learn::SpreadSets::tight;
  DuetPolicyOptions plain;
  plain.prior_weight = 100;
  plain.speed_floor = 0;
  auto q = make_duet_placement(tight, plain);
  ck_assert(q->name() == "duet");
  ck_assert(place_on_spread_cluster(*q, 1, 4) == where);
  plain.spread = learn::SpreadSets::fastest;
  auto f = make_duet_placement(tight, plain);
  ck_assert(f->name() == "duet-fastest-sets");
  const auto fast = place_on_spread_cluster(*f, 1, 4);
  ck_assert(fast.has_value());
  int fast_v100 = 0;
  for (auto& part : *fast) fast_v100 += part.machine == 3 ? part.gpus : 0;
  ck_assert_int_eq(fast_v100, 1);  // the three X100s' GPUs first
}
END_TEST

// The learned spread rule through the routine itself, with a scorer that
// puts 100 on the machines of one speed: the first machine of a spread job is
// chosen among all of them. A T4 first (below the fastest floor of 1.0) sets
// the job's speed: the 4-GPU job takes four T4s, the faster machines stay
// free. An X100 first (above the floor) keeps the fastest rule.
class PreferSpeed : public PlacementScorer {
 public:
  explicit PreferSpeed(float speed) : speed_(speed) {}
  void score(std::span<const float> rows, std::size_t k, std::vector<float>& out) override {
    out.assign(k, 0.f);
    for (std::size_t i = 0; i < k; ++i)
      if (std::abs(rows[i * kPlacementFeatures + kRelSpeed] - speed_) < 1e-3f) out[i] = 100;
  }

 private:
  float speed_;
};

struct NoPreference : PlacementScorer {
  void score(std::span<const float>, std::size_t k, std::vector<float>& out) override { out.assign(k, 0.f); }
};

START_TEST(learned_sets_take_the_speed_of_the_first_machine) {
  const std::vector<MachineView> ms = spread_cluster();
  const std::vector<std::string> types = test_support::kSpreadTypes;
  const ClusterView c{0, types, ms, 20, 16, 0};
  PerformanceGp gp(machine_descs(c), 1, GpHyper{});
  JobView j;
  j.id = 1;
  j.gpus = 4;
  PriorWeights w;
  w.spread = SpreadSets::learned;
  w.speed_floor = 0;
  PlacementScores s;
  PreferSpeed t4(0.4f);
  auto p = place_job(gp, ms, j, PlacementJob{0, 4}, t4, w, s);
  ck_assert(p.has_value());
  ck_assert_int_eq(static_cast<int>(p->size()), 4);
  for (auto& part : *p) ck_assert_str_eq(types[ms[part.machine].gpu_type].c_str(), "T4");
  PreferSpeed x100(2.3f);
  p = place_job(gp, ms, j, PlacementJob{0, 4}, x100, w, s);
  ck_assert(p.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *p), 1.0, 1e-9);
  // A scorer with no preference: the first machine's prior peaks at the
  // floor, so the untrained rule is tight (the V100's 2 GPUs, then X100s).
  PreferSpeed none(-1.f);
  p = place_job(gp, ms, j, PlacementJob{0, 4}, none, w, s);
  w.spread = SpreadSets::tight;
  const auto tight = place_job(gp, ms, j, PlacementJob{0, 4}, none, w, s);
  ck_assert(p.has_value() && p == tight);
  ck_assert_int_eq((*p)[0].machine, 3);
  w.spread = SpreadSets::fastest;  // the model's rule: a T4 is never a candidate
  p = place_job(gp, ms, j, PlacementJob{0, 4}, t4, w, s);
  ck_assert(p.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *p), 1.0, 1e-9);
  ck_assert_str_eq(spread_sets_name(parse_spread_sets("learned")), "learned");
  ck_assert_str_eq(spread_sets_name(SpreadSets::tight), "tight");
}
END_TEST

// The spread floor (machine_set.h): on spread_cluster() a 4-GPU job's
// fastest set on the idle cluster is two X100s (2.3), so it keeps to machines
// of at least 1.15, and the X100s have 3 GPUs free: it waits, where without
// the floor it takes the V100 too. An 8-GPU job's idle floor is the V100's
// 1.0: the T4s (0.4) are below 0.5, so it waits too; with the floor at 0 it
// takes them, or once it has waited kSpreadFloorMaxWaitS. The K80 holds a
// 3-GPU job alone: the spread floor does not apply (the one-machine floor
// does: one_machine_floor_waits_for_fast_machines).
START_TEST(spread_floor_waits_for_fast_machines) {
  const std::vector<MachineView> ms = spread_cluster();
  std::vector<uint32_t> all(ms.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  ck_assert_double_eq_tol(spread_speed_limit(ms, 4, all), 1.15, 1e-6);
  ck_assert_double_eq_tol(spread_speed_limit(ms, 8, all), 0.5, 1e-6);
  ck_assert_double_eq(spread_speed_limit(ms, 3, all), 0.0);   // the K80 holds it alone
  ck_assert_double_eq(spread_speed_limit(ms, 30, all), 0.0);  // 27 GPUs in all
  ck_assert_double_eq(spread_speed_limit(ms, 8, all, 0), 0.0);

  DuetPolicyOptions opt;
  opt.spread = learn::SpreadSets::tight;
  auto p = make_duet_placement(untrained(3), opt);
  ck_assert(!place_on_spread_cluster(*p, 1, 4).has_value());
  ck_assert(!place_on_spread_cluster(*p, 2, 8).has_value());
  // The floor holds a job for kSpreadFloorMaxWaitS of waiting, then lets it
  // take the T4s.
  ck_assert(!place_on_spread_cluster(*p, 2, 8, kSpreadFloorMaxWaitS - 1).has_value());
  const auto waited = place_on_spread_cluster(*p, 2, 8, kSpreadFloorMaxWaitS);
  ck_assert(waited.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *waited), 0.4, 1e-6);
  opt.speed_floor = 0;
  auto q = make_duet_placement(untrained(3), opt);
  ck_assert(place_on_spread_cluster(*q, 1, 4).has_value());
  const auto eight = place_on_spread_cluster(*q, 2, 8);
  ck_assert(eight.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *eight), 0.4, 1e-6);

  // With every X100 GPU free the 4-GPU job starts, on X100s alone.
  std::vector<MachineView> free = ms;
  for (int i = 0; i < 3; ++i) free[i].free_gpus = 2;
  PerformanceGp gp(machine_descs(ClusterView{0, test_support::kSpreadTypes, free, 20, 19, 0}), 1, GpHyper{});
  JobView j;
  j.id = 4;
  j.gpus = 4;
  PriorWeights w;
  w.spread = SpreadSets::tight;
  PlacementScores sc;
  NoPreference none;
  const auto x = place_job(gp, free, j, PlacementJob{0, 4}, none, w, sc);
  ck_assert(x.has_value());
  ck_assert_double_eq_tol(placement_speed(free, *x), 2.3, 1e-6);
}
END_TEST

// The one-machine floor (machine_set.h): on spread_cluster() a 3-GPU job
// fits the V100 (1.0) or the K80 (0.3) alone, so it keeps to machines of at
// least 0.5; the V100 has 2 GPUs free: it waits, where without the floor it
// takes the K80, and takes the K80 once it has waited
// kOneMachineFloorMaxWaitS. A 1-GPU job keeps to the X100s (2.3 x 0.5), which
// hold 6 of the 20 GPUs. With one X100 only they hold 2 of 20, less than
// kFloorCapacityShare: a queue for them would be long, and there is no floor.
START_TEST(one_machine_floor_waits_for_fast_machines) {
  std::vector<MachineView> ms = spread_cluster();
  std::vector<uint32_t> all(ms.size());
  for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
  ck_assert_double_eq_tol(one_machine_speed_limit(ms, 3, all), 0.5, 1e-6);
  ck_assert_double_eq_tol(one_machine_speed_limit(ms, 1, all), 1.15, 1e-6);
  ck_assert_double_eq(one_machine_speed_limit(ms, 4, all), 0.0);  // no machine holds 4
  ck_assert_double_eq(one_machine_speed_limit(ms, 1, all, 0), 0.0);
  auto everyone = [](std::size_t) { return true; };
  ck_assert_double_eq_tol(speed_floor_limit(ms, 3, 0, kSpreadSpeedShare, everyone), 0.5, 1e-6);
  ck_assert_double_eq(speed_floor_limit(ms, 3, kOneMachineFloorMaxWaitS, kSpreadSpeedShare, everyone), 0.0);
  ck_assert_double_eq_tol(speed_floor_limit(ms, 8, kOneMachineFloorMaxWaitS, kSpreadSpeedShare, everyone), 0.5,
                          1e-6);  // the spread floor's own time

  DuetPolicyOptions opt;
  auto p = make_duet_placement(untrained(3), opt);
  ck_assert(!place_on_spread_cluster(*p, 1, 3).has_value());
  ck_assert(!place_on_spread_cluster(*p, 2, 3, kOneMachineFloorMaxWaitS - 1).has_value());
  const auto waited = place_on_spread_cluster(*p, 3, 3, kOneMachineFloorMaxWaitS);
  ck_assert(waited.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *waited), 0.3, 1e-6);
  const auto one = place_on_spread_cluster(*p, 4, 1);
  ck_assert(one.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *one), 2.3, 1e-6);
  opt.speed_floor = 0;
  auto q = make_duet_placement(untrained(3), opt);
  const auto three = place_on_spread_cluster(*q, 5, 3);
  ck_assert(three.has_value());
  ck_assert_double_eq_tol(placement_speed(ms, *three), 0.3, 1e-6);

  ms[1].speed = ms[2].speed = 0.4;  // one X100 left
  ck_assert_double_eq(one_machine_speed_limit(ms, 1, all), 0.0);
  ck_assert_double_eq_tol(one_machine_speed_limit(ms, 3, all), 0.5, 1e-6);  // V100 and X100: 5 of 20
}
END_TEST

// Ranks a 30-job queue with the ordering network alone (no prior), paired
// with `peer`, on an 8-machine cluster.
static std::vector<size_t> rank_queue(std::shared_ptr<const Model> m, bool messages, PlacementPolicy& peer) {
  DuetPolicyOptions o;
  o.order_prior_weight = 0;
  o.messages = messages;
  auto ord = make_duet_ordering(m, o);
  ord->pair_with(peer);
  std::vector<std::string> types = {"V100", "K80"};
  static const char* names[8] = {"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7"};
  std::vector<MachineView> ms;
  for (int i = 0; i < 8; ++i) ms.push_back({names[i], i % 2, 8, i, i % 3, i % 2 ? 0.4 : 1.0, i / 4});
  ClusterView c{3600, types, ms, 64, 28, 0};
  std::vector<JobView> jobs(30);
  for (int i = 0; i < 30; ++i) {
    jobs[i].id = i + 1;
    jobs[i].gpus = 1 << (i % 4);
    jobs[i].wait_s = 37.0 * i;
  }
  std::vector<size_t> order;
  ord->rank(jobs, c, order);
  return order;
}

START_TEST(agents_exchange_messages) {
  // Message weights made large so that what the placement agent says moves
  // the ordering scores visibly.
  Model big = make_initial_model(NetConfig{}, GpHyper{}, 9);
  const auto& nc = big.nets;
  for (NamedArray& a : big.weights) {
    if (a.name == "ordering.head1.weight") {
      const int64_t in = a.shape[1], msg0 = in - nc.placement.placement_message;
      for (int64_t r = 0; r < a.shape[0]; ++r)
        for (int64_t k = msg0; k < in; ++k) a.data[r * in + k] = (r + k) % 2 ? 4.f : -4.f;
    }
    if (a.name == "placement.msg.bias")
      for (size_t k = 0; k < a.data.size(); ++k) a.data[k] = k % 2 ? 2.f : -2.f;
  }
  auto m = std::make_shared<const Model>(big);
  auto duet_place = make_duet_placement(m);
  auto best_fit = make_placement("best-fit");
  const auto with_msgs = rank_queue(m, true, *duet_place);
  const auto zeros = rank_queue(m, false, *duet_place);
  const auto no_peer = rank_queue(m, true, *best_fit);
  ck_assert_uint_eq(with_msgs.size(), 30);
  // A baseline placement sends nothing: the same as messages turned off.
  ck_assert(no_peer == zeros);
  // The duet placement's message reaches the ordering scores.
  ck_assert(with_msgs != zeros);
  // And a whole simulation with messages still runs every job.
  auto o = make_duet_ordering(m);
  auto p = make_duet_placement(m);
  int64_t n = 0;
  simulate(*o, *p, n);
  ck_assert_int_eq(n, 12);
}
END_TEST

int main() {
  Suite* s = suite_create("learn_policy");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, job_features_values);
  tcase_add_test(tc, history_predicts_from_most_specific_key);
  tcase_add_test(tc, untrained_duet_finishes_every_job);
  tcase_add_test(tc, each_agent_with_a_baseline);
  tcase_add_test(tc, deterministic_for_a_seed);
  tcase_add_test(tc, registry_needs_a_model);
  tcase_add_test(tc, placement_uses_gp_and_prefers_fast_machines);
  tcase_add_test(tc, placement_uses_the_job_types_speeds);
  tcase_add_test(tc, spread_job_keeps_fastest_floor);
  tcase_add_test(tc, slow_sets_spread_over_the_slowest_machines);
  tcase_add_test(tc, tight_sets_take_the_slowest_machines_above_the_floor);
  tcase_add_test(tc, learned_sets_take_the_speed_of_the_first_machine);
  tcase_add_test(tc, spread_floor_waits_for_fast_machines);
  tcase_add_test(tc, one_machine_floor_waits_for_fast_machines);
  tcase_add_test(tc, agents_exchange_messages);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
