// The shipped model (models/duet.model) on a cluster it was never trained on
// (models/other-cluster.csv: X100, a made-up type at speed 2.3; K80 from the
// throughput table; T4 at 0.4 instead of PAI's 0.52; 1-, 4-, 8- and 16-GPU
// machines), without retraining: every job of a Philly test-split window
// finishes with finite metrics, the learned placement prefers the fastest
// free type, and what matters about an unknown type is its speed, not its name.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "policy/core/policy.h"
#include "policy/io/cluster.h"
#include "policy/io/philly.h"
#include "policy/io/trace.h"
#include "policy/learn/agents/duet_policy.h"
#include "policy/learn/agents/placement_features.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/gp/performance_gp.h"
#include "policy/learn/model/model_file.h"
#include "policy/model/cluster_model.h"
#include "policy/model/gavel.h"
#include "policy/model/prices.h"
#include "policy/sim/simulator.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::learn;
using test_support::gavel_table;
using test_support::source_path;

static std::shared_ptr<const Model> shipped() {
  static auto m = std::make_shared<const Model>(load_model(source_path("models/duet.model")));
  return m;
}

static ClusterSpec other_spec() { return read_cluster(source_path("models/other-cluster.csv")); }

// The first 300 jobs of the test split (submitted from 2017-11-16, UTC).
static const Trace& short_trace() {
  static Trace t = [] {
    TimeWindow w;
    ck_assert(parse_timestamp("2017-11-16 00:00:00", w.from));
    Trace all = read_philly(source_path("data/philly/philly.csv"), w);
    ck_assert_uint_gt(all.jobs.size(), 300);
    all.jobs.resize(300);
    return all;
  }();
  return t;
}

struct Run {
  SimResult r;
  int64_t finished = 0;
  int first_job_gpus = 0;
  std::vector<int> first_job_types;  // type index of the first job's machines
};

static Run simulate(const ClusterModel& c, const PriceTable* prices, uint64_t seed = 1) {
  auto m = shipped();
  auto o = make_duet_ordering(m);
  auto p = make_duet_placement(m);
  SimOptions opt;
  opt.model.seed = seed;
  Simulator sim(short_trace(), c, gavel_table(), prices, opt);
  sim.set_policies(o.get(), p.get());
  struct Obs : SimObserver {
    const ClusterModel* c = nullptr;
    Run* run = nullptr;
    void on_start(const JobView& j, const Placement& where, double) override {
      if (!run->first_job_types.empty()) return;
      run->first_job_gpus = j.gpus;
      for (const PlacementPart& part : where) run->first_job_types.push_back(c->machines[part.machine].type);
    }
    void on_finish(const JobView&, double) override { ++run->finished; }
  } obs;
  Run run;
  obs.c = &c;
  obs.run = &run;
  sim.set_observer(&obs);
  run.r = sim.run();
  return run;
}

// Every machine free, each at its type's speed.
struct FreeCluster {
  std::vector<std::string> types;
  std::vector<MachineView> machines;
  ClusterView view() const {
    int total = 0, free = 0;
    for (const MachineView& m : machines) total += m.total_gpus, free += m.free_gpus;
    return ClusterView{0, types, machines, total, free, 0};
  }
};
static FreeCluster free_cluster(const ClusterModel& c) {
  FreeCluster f;
  for (const GpuType& t : c.gpu_types) f.types.push_back(t.name);
  for (const Machine& m : c.machines)
    f.machines.push_back(MachineView{m.name, m.type, m.gpus, m.gpus, m.rack, c.gpu_types[m.type].mean_speed, 0});
  return f;
}

static std::string placed_type(PlacementPolicy& p, const FreeCluster& f, int64_t id, int gpus) {
  JobView j;
  j.id = id;
  j.gpus = gpus;
  auto where = p.place(j, f.view());
  ck_assert_msg(where.has_value(), "no placement for a %d-GPU job on a free cluster", gpus);
  int total = 0;
  for (const PlacementPart& part : *where) total += part.gpus;
  ck_assert_int_eq(total, gpus);
  return f.types[f.machines[(*where)[0].machine].gpu_type];
}

START_TEST(every_job_finishes_with_finite_metrics) {
  const ClusterModel c = build_cluster(other_spec(), gavel_table());
  const int x100 = c.find_type("X100");
  ck_assert_int_ge(x100, 0);
  ck_assert_int_eq(c.gpu_types[x100].table_gpu, -1);  // unknown to the throughput table
  ck_assert_double_eq_tol(c.gpu_types[x100].mean_speed, 2.3, 1e-12);
  const PriceTable prices = PriceTable::read(source_path("etc/gpu-prices.csv"));
  const Run run = simulate(c, &prices);
  const SimResult& r = run.r;
  ck_assert_int_eq(run.finished, 300);
  ck_assert_int_eq(r.jobs, 300);
  for (double v : {r.avg_jct_s, r.p50_jct_s, r.p95_jct_s, r.p99_jct_s, r.avg_queue_s, r.makespan_s, r.fees_usd,
                   r.energy_kwh, r.gpu_util})
    ck_assert_msg(std::isfinite(v) && v >= 0, "metric %g", v);
  ck_assert(r.avg_jct_s > 0 && r.fees_usd > 0 && r.energy_kwh > 0);
  // The first job meets an empty cluster: if X100 machines can hold it, it
  // goes there (the file lists them last, so a NaN score could not pick them).
  ck_assert(!run.first_job_types.empty());
  if (run.first_job_gpus <= 4)
    for (int t : run.first_job_types) ck_assert_str_eq(c.gpu_types[t].name.c_str(), "X100");
}
END_TEST

START_TEST(placement_prefers_the_fastest_free_type) {
  const ClusterModel c = build_cluster(other_spec(), gavel_table());
  FreeCluster f = free_cluster(c);
  // Head scores are finite for speeds far outside training (PAI: 0.5 .. 1).
  {
    std::vector<MachineDesc> d;
    std::vector<MachineState> st;
    for (const MachineView& m : f.machines) {
      d.push_back(MachineDesc{std::string(m.name), f.types[m.gpu_type], std::to_string(m.rack), {std::log(m.speed)}});
      st.push_back(MachineState{static_cast<uint32_t>(st.size()), static_cast<uint16_t>(m.free_gpus),
                                static_cast<uint16_t>(m.total_gpus), 0, static_cast<float>(m.speed), 0.f});
    }
    const auto types = static_cast<uint32_t>(shipped()->job_types.size());
    PerformanceGp gp(std::move(d), types, shipped()->gp);
    std::vector<float> rows, scores;
    placement_features(gp, PlacementJob{types, 1}, st, rows);
    PlacementHead(*shipped()).score(rows, st.size(), {}, scores);
    ck_assert_uint_eq(scores.size(), f.machines.size());
    for (float x : rows) ck_assert(std::isfinite(x));
    for (float x : scores) ck_assert(std::isfinite(x));
  }
  auto p = make_duet_placement(shipped());
  int64_t id = 1;
  for (int g : {1, 2, 4}) ck_assert_str_eq(placed_type(*p, f, id++, g).c_str(), "X100");
  // 8 GPUs fit one V100 or K80 machine (X100 machines have 4): the faster one.
  ck_assert_str_eq(placed_type(*p, f, id++, 8).c_str(), "V100");
  // X100 full: the next fastest type with room, V100.
  for (MachineView& m : f.machines)
    if (f.types[m.gpu_type] == "X100") m.free_gpus = 0;
  ck_assert_str_eq(placed_type(*p, f, id++, 2).c_str(), "V100");
  // Only K80 (0.30) and T4 (0.4) left, 1-GPU job: T4.
  for (MachineView& m : f.machines)
    if (f.types[m.gpu_type] == "V100") m.free_gpus = 0;
  ck_assert_str_eq(placed_type(*p, f, id++, 1).c_str(), "T4");
}
END_TEST

START_TEST(unknown_types_count_by_speed_not_name) {
  ClusterSpec renamed = other_spec(), slowed = other_spec();
  for (MachineSpec& m : renamed.machines)
    if (m.gpu_type == "X100") m.gpu_type = "Q7";
  // Same schedule under another name (no prices: those are looked up by name).
  const Run a = simulate(build_cluster(other_spec(), gavel_table()), nullptr, 2);
  const Run b = simulate(build_cluster(renamed, gavel_table()), nullptr, 2);
  ck_assert_int_eq(b.finished, 300);
  ck_assert_double_eq(a.r.avg_jct_s, b.r.avg_jct_s);
  ck_assert_double_eq(a.r.makespan_s, b.r.makespan_s);
  // The same type made the slowest one: no longer the first choice.
  for (MachineSpec& m : slowed.machines)
    if (m.gpu_type == "X100") m.speed = 0.2;
  const ClusterModel c = build_cluster(slowed, gavel_table());
  FreeCluster f = free_cluster(c);
  auto p = make_duet_placement(shipped());
  ck_assert_str_eq(placed_type(*p, f, 1, 1).c_str(), "V100");
  const Run s = simulate(c, nullptr, 2);
  ck_assert_int_eq(s.finished, 300);
  ck_assert(std::isfinite(s.r.avg_jct_s));
  for (int t : s.first_job_types) ck_assert_str_ne(c.gpu_types[t].name.c_str(), "X100");
}
END_TEST

int main() {
  Suite* s = suite_create("learn_unseen_cluster");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_job_finishes_with_finite_metrics);
  tcase_add_test(tc, placement_prefers_the_fastest_free_type);
  tcase_add_test(tc, unknown_types_count_by_speed_not_name);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
