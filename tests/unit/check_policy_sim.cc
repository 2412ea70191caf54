// Simulator: tiny hand-computed traces (exact JCTs) and invariants on a real
// Philly slice.
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include "policy/core/policy.h"
#include "policy/io/cluster.h"
#include "policy/model/gavel.h"
#include "policy/io/pai.h"
#include "policy/io/philly.h"
#include "policy/io/trace.h"
#include "policy/model/cluster_model.h"
#include "policy/registry/policy_registry.h"
#include "policy/io/csv.h"
#include "policy/sim/simulator.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;

// The registry's context with only a seed (no model).
static PolicyContext seeded(uint64_t seed) {
  PolicyContext c;
  c.seed = seed;
  return c;
}

using test_support::gavel_table;
using test_support::source_path;

struct Run {
  SimResult r;
  std::map<int64_t, double> jct;
  std::map<int64_t, Placement> where;
};

struct Recorder : SimObserver {
  Run* run;
  void on_start(const JobView& j, const Placement& p, double) override { run->where[j.id] = p; }
  void on_finish(const JobView& j, double now) override { run->jct[j.id] = now - j.submit_s; }
};

static Run simulate(const std::string& trace_csv, const std::string& cluster_csv, const std::string& order,
                    const std::string& place, bool ideal, bool no_variability = true) {
  std::istringstream ts(trace_csv), cs(cluster_csv);
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  o.model.ideal = ideal;
  if (no_variability) o.model.variability = Variability{0, 0, 0};
  Simulator sim(t, c, gavel_table(), nullptr, o);
  auto ord = make_ordering(order);
  auto pl = make_placement(place, seeded(1));
  sim.set_policies(ord.get(), pl.get());
  Run run;
  Recorder rec;
  rec.run = &run;
  sim.set_observer(&rec);
  run.r = sim.run();
  return run;
}

static const char* kTwoMachines =
    "machine,gpu_type,num_gpus,rack\n"
    "m0,V100,4,r0\n"
    "m1,V100,4,r1\n";

// Job 1 (4 GPUs, 100 s) and job 2 (8 GPUs, 50 s) at 0; job 3 (2 GPUs, 20 s) at 10.
static const char* kThreeJobs =
    "job_id,submit,duration,num_gpus\n"
    "1,0,100,4\n"
    "2,0,50,8\n"
    "3,10,20,2\n";

START_TEST(fifo_blocks_head_of_line) {
  // t=0: 1 starts on m0; 2 needs 8, blocked; 3 waits behind 2 (strict FIFO).
  // t=100: 2 starts on m0+m1, ends 150; 3 runs 150..170.
  Run run = simulate(kThreeJobs, kTwoMachines, "fifo", "first-fit", true);
  ck_assert_double_eq(run.jct[1], 100);
  ck_assert_double_eq(run.jct[2], 150);
  ck_assert_double_eq(run.jct[3], 160);
  ck_assert_int_eq(run.r.jobs, 3);
  ck_assert_double_eq_tol(run.r.avg_jct_s, (100 + 150 + 160) / 3.0, 1e-9);
  ck_assert_double_eq(run.r.makespan_s, 170);
  ck_assert_double_eq_tol(run.r.avg_queue_s, (0 + 100 + 140) / 3.0, 1e-9);
  ck_assert_double_eq(run.r.max_wait_s, 140);
  ck_assert_double_eq(run.r.busy_gpu_s, 4 * 100 + 8 * 50 + 2 * 20);
  ck_assert_double_eq_tol(run.r.gpu_util, (400.0 + 400 + 40) / (8 * 170), 1e-12);
  ck_assert_int_eq(run.where[2].size(), 2);
}
END_TEST

START_TEST(sjf_oracle_runs_short_first) {
  // t=0: 2 (50 s) ranks first, takes all 8 GPUs until 50; 1 waits.
  // t=50: 3 (20 s) on m0, 1 (100 s) on m1: 3 ends 70, 1 ends 150.
  Run run = simulate(kThreeJobs, kTwoMachines, "sjf-oracle", "first-fit", true);
  ck_assert_double_eq(run.jct[2], 50);
  ck_assert_double_eq(run.jct[3], 60);
  ck_assert_double_eq(run.jct[1], 150);
  ck_assert_double_eq_tol(run.r.avg_jct_s, (50 + 60 + 150) / 3.0, 1e-9);
  ck_assert(run.r.oracle);
  ck_assert_int_eq(run.where[1][0].machine, 1);
}
END_TEST

START_TEST(best_fit_consolidates) {
  // m0 has 4 GPUs, m1 2. A (2 GPUs) at 0, B (4 GPUs) at 1.
  // best-fit: A on m1 (exact fit), B on m0 whole: JCT 10.
  // first-fit: A on m0, B spread over m0+m1.
  const char* cluster = "machine,gpu_type,num_gpus\nm0,V100,4\nm1,V100,2\n";
  const char* trace = "job_id,submit,duration,num_gpus\n1,0,100,2\n2,1,10,4\n";
  Run bf = simulate(trace, cluster, "fifo", "best-fit", true);
  ck_assert_int_eq(bf.where[1][0].machine, 1);
  ck_assert_int_eq(bf.where[2].size(), 1);
  ck_assert_int_eq(bf.where[2][0].machine, 0);
  ck_assert_double_eq(bf.jct[2], 10);
  Run ff = simulate(trace, cluster, "fifo", "first-fit", true);
  ck_assert_int_eq(ff.where[1][0].machine, 0);
  ck_assert_int_eq(ff.where[2].size(), 2);
}
END_TEST

// Gavel V100 numbers for ResNet-50 (bs 32) = A and ResNet-18 (bs 16) = B.
static const double kAloneA = 7.787264918596293, kAWithB = 7.002117100116916;
static const double kAloneB = 32.353384328946916, kBWithA = 26.002008754304228;

START_TEST(colocation_slows_both) {
  // Both 1-GPU jobs land on m0 at t=0. rate = 1 - beta (1 - c), beta = 0.1.
  const char* trace =
      "job_id,submit,duration,num_gpus,job_type\n"
      "1,0,100,1,ResNet-50 (batch size 32)\n"
      "2,0,100,1,ResNet-18 (batch size 16)\n";
  Run run = simulate(trace, kTwoMachines, "fifo", "first-fit", false);
  const double rA = 1 - 0.1 * (1 - kAWithB / kAloneA);
  const double rB = 1 - 0.1 * (1 - kBWithA / kAloneB);
  ck_assert(rA > rB);
  const double tA = 100 / rA;              // A is hurt less and ends first
  const double tB = tA + (100 - tA * rB);  // then B runs alone at rate 1
  ck_assert_double_eq_tol(run.jct[2], tB, 1e-6);
  ck_assert_double_eq_tol(run.jct[1], tA, 1e-6);
  ck_assert_int_eq(run.where[1][0].machine, 0);
  ck_assert_int_eq(run.where[2][0].machine, 0);
}
END_TEST

START_TEST(cross_machine_and_cross_rack_penalty) {
  // 8-GPU ResNet-50 (bs 32) over two 4-GPU machines: rate = Gavel
  // unconsolidated / consolidated at scale 8; x 0.9 when racks differ.
  const double spread = 22.82976391752828 / 24.067423556662327;
  const char* trace = "job_id,submit,duration,num_gpus,job_type\n1,0,1000,8,ResNet-50 (batch size 32)\n";
  Run cross = simulate(trace, kTwoMachines, "fifo", "first-fit", false);
  ck_assert_double_eq_tol(cross.jct[1], 1000 / (spread * 0.9), 1e-6);
  const char* same_rack = "machine,gpu_type,num_gpus,rack\nm0,V100,4,r0\nm1,V100,4,r0\n";
  Run same = simulate(trace, same_rack, "fifo", "first-fit", false);
  ck_assert_double_eq_tol(same.jct[1], 1000 / spread, 1e-6);
  // One 8-GPU machine: no penalty.
  Run one = simulate(trace, "machine,gpu_type,num_gpus\nbig,V100,8\n", "fifo", "first-fit", false);
  ck_assert_double_eq_tol(one.jct[1], 1000, 1e-9);
}
END_TEST

START_TEST(gpu_type_speed_and_constraint) {
  // P100 runs ResNet-50 (bs 32) at 4.888/7.787 of a V100; a job constrained to
  // K80 waits for the K80 machine; a flat-speed type uses its speed.
  const char* cluster = "machine,gpu_type,num_gpus,speed\np,P100,1,\nk,K80,1,\nt,T4,1,0.5\n";
  const char* trace =
      "job_id,submit,duration,num_gpus,gpu_type,job_type\n"
      "1,0,100,1,P100,ResNet-50 (batch size 32)\n"
      "2,0,100,1,T4,ResNet-50 (batch size 32)\n";
  Run run = simulate(trace, cluster, "fifo", "first-fit", false);
  ck_assert_double_eq_tol(run.jct[1], 100 / (4.888323684976709 / 7.787264918596293), 1e-6);
  ck_assert_double_eq_tol(run.jct[2], 200, 1e-9);
  ck_assert_int_eq(run.where[2][0].machine, 2);
}
END_TEST

START_TEST(srtf_preempts_long_job) {
  // One 1-GPU machine. Long (100 s) at 0, short (10 s) at 5: SRTF preempts the
  // long job at 5 (ideal: free), short ends 15, long resumes and ends 110.
  const char* trace = "job_id,submit,duration,num_gpus\n1,0,100,1\n2,5,10,1\n";
  Run run = simulate(trace, "machine,gpu_type,num_gpus\nm,V100,1\n", "srtf-oracle", "first-fit", true);
  ck_assert_double_eq(run.jct[2], 10);
  ck_assert_double_eq(run.jct[1], 110);
  ck_assert_int_eq(run.r.preemptions, 1);
}
END_TEST

START_TEST(tiresias_queues_and_jump_time) {
  // One 1-GPU machine. Job 1 (5000 s) at 0, job 2 (100 s) at 100: both in Q0,
  // and a pending job never displaces a running one of its queue, so 2 waits
  // until 1 reaches the Q0 limit (3250 s; a decision point of the policy's
  // own, between the 300 s periods), runs 3250..3350, then 1 resumes to 5100.
  const char* trace = "job_id,submit,duration,num_gpus\n1,0,5000,1\n2,100,100,1\n";
  for (const char* ord : {"tiresias-las", "tiresias-dlas"}) {
    Run run = simulate(trace, "machine,gpu_type,num_gpus\nm,V100,1\n", ord, "first-fit", true);
    ck_assert_double_eq(run.jct[2], 3250);
    ck_assert_double_eq(run.jct[1], 5100);
    ck_assert_int_eq(run.r.preemptions, 1);
  }
  // 4 GPUs: job 1 takes all 4 for 1000 s. On GPU-seconds (tiresias-las) it
  // passes Q0's 3250 at 812.5 s; the Tiresias simulator's jump time, now +
  // ceil((3250 - executed seconds) / 4), lands later at every decision after
  // the first, so the 300 s period catches it at 900: job 2 (1 GPU) runs
  // 900..1000 and 1 resumes to 1100. On seconds (tiresias-dlas) 1 stays in Q0.
  const char* wide = "job_id,submit,duration,num_gpus\n1,0,1000,4\n2,100,100,1\n";
  const char* four = "machine,gpu_type,num_gpus\nm,V100,4\n";
  Run gpu = simulate(wide, four, "tiresias-las", "first-fit", true);
  ck_assert_double_eq(gpu.jct[2], 900);
  ck_assert_double_eq(gpu.jct[1], 1100);
  Run sec = simulate(wide, four, "tiresias-dlas", "first-fit", true);
  ck_assert_double_eq(sec.jct[2], 1000);
  ck_assert_double_eq(sec.jct[1], 1000);
}
END_TEST

START_TEST(oversized_job_is_an_error_or_dropped) {
  const char* trace = "job_id,submit,duration,num_gpus\n1,0,10,1\n2,0,10,64\n";
  std::istringstream ts(trace), cs(kTwoMachines);
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  bool threw = false;
  try {
    Simulator sim(t, c, gavel_table(), nullptr, o);
  } catch (const InputError& e) {
    threw = true;
    ck_assert_int_eq(e.line(), 3);
  }
  ck_assert(threw);
  o.drop_oversized = true;
  Simulator sim(t, c, gavel_table(), nullptr, o);
  auto f = make_ordering("fifo");
  auto p = make_placement("first-fit");
  sim.set_policies(f.get(), p.get());
  SimResult r = sim.run();
  ck_assert_int_eq(r.jobs, 1);
  ck_assert_int_eq(sim.dropped_jobs(), 1);
}
END_TEST

// A joint policy (as a learned agent would be): starts the longest-waiting
// job that fits on the machine with the most free GPUs; records its calls.
struct GreedyJoint : JointPolicy {
  int calls = 0, finished = 0;
  std::string name() const override { return "greedy-joint"; }
  std::vector<Decision> decide(std::span<const JobView> pending, const ClusterView& c) override {
    ++calls;
    std::vector<Decision> out;
    std::vector<int> free;
    for (const auto& m : c.machines) free.push_back(m.free_gpus);
    for (size_t i = 0; i < pending.size(); ++i) {
      size_t best = 0;
      for (size_t m = 1; m < free.size(); ++m)
        if (free[m] > free[best]) best = m;
      Placement p;
      if (free[best] >= pending[i].gpus) {
        p = {{static_cast<int>(best), pending[i].gpus}};
      } else {  // spread in machine order when the free GPUs add up
        int need = pending[i].gpus;
        for (size_t m = 0; m < free.size() && need > 0; ++m)
          if (free[m] > 0) p.push_back({static_cast<int>(m), std::min(need, free[m])}), need -= p.back().gpus;
        if (need > 0) continue;
      }
      for (auto& q : p) free[q.machine] -= q.gpus;
      out.push_back(Decision{i, p});
    }
    return out;
  }
  void on_finish(const JobView&, double) override { ++finished; }
};

START_TEST(joint_policy_and_step_api) {
  std::istringstream ts(kThreeJobs), cs(kTwoMachines);
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  o.model.ideal = true;
  Simulator sim(t, c, gavel_table(), nullptr, o);
  GreedyJoint joint;
  sim.set_joint(&joint);
  int steps = 0;
  double last = -1;
  while (sim.step()) {
    ck_assert(sim.now() >= last);  // time never goes back
    last = sim.now();
    ++steps;
  }
  SimResult r = sim.result();
  ck_assert_int_eq(r.jobs, 3);
  ck_assert_int_eq(joint.finished, 3);
  ck_assert_int_gt(joint.calls, 0);
  ck_assert_int_gt(steps, 2);
  // Job 1 runs 0..100 on m0; job 2 (8 GPUs) waits for both machines, 100..150;
  // job 3 passes it on m1, 10..30.
  ck_assert_double_eq(r.jct_sorted[0], 20);
  ck_assert_double_eq(r.jct_sorted[1], 100);
  ck_assert_double_eq(r.jct_sorted[2], 150);
  ck_assert_str_eq(r.ordering.c_str(), "greedy-joint");
}
END_TEST

struct NeverStarts : JointPolicy {
  std::string name() const override { return "never"; }
  std::vector<Decision> decide(std::span<const JobView>, const ClusterView&) override { return {}; }
};

// A trace built in code skips the reader's limits: a 1e300 s job ran for ever
// (next_fluct += 3600 stops changing past ~3e19). The simulator refuses it.
START_TEST(huge_times_are_refused_not_run_forever) {
  std::istringstream ts(kThreeJobs), cs(kTwoMachines);
  Trace t = read_trace(ts, "trace");
  t.jobs[1].duration = 1e300;
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  try {
    Simulator sim(t, c, gavel_table(), nullptr, o);
    ck_abort_msg("a 1e300 s job was accepted");
  } catch (const InputError& e) {
    ck_assert_int_eq(e.line(), t.jobs[1].line);
    ck_assert_msg(std::string(e.what()).find("must be from 0 to 315360000 s (10 years)") != std::string::npos, "%s",
                  e.what());
  }
  t.jobs[1].duration = 10;
  t.jobs[2].submit = 1e300;
  try {
    Simulator sim(t, c, gavel_table(), nullptr, o);
    ck_abort_msg("a job submitted at 1e300 s was accepted");
  } catch (const InputError& e) { ck_assert_int_eq(e.line(), t.jobs[2].line); }
}
END_TEST

START_TEST(stuck_jobs_are_an_error) {
  std::istringstream ts(kThreeJobs), cs(kTwoMachines);
  Trace t = read_trace(ts, "trace");
  ClusterModel c = build_cluster(read_cluster(cs, "cluster"), gavel_table());
  SimOptions o;
  o.model.ideal = true;
  Simulator sim(t, c, gavel_table(), nullptr, o);
  NeverStarts never;
  sim.set_joint(&never);
  bool threw = false;
  try {
    sim.run();
  } catch (const std::runtime_error& e) { threw = std::string(e.what()).find("can never start") != std::string::npos; }
  ck_assert(threw);
}
END_TEST

// --- invariants on a real Philly slice ------------------------------------

struct CapacityChecker : SimObserver {
  std::vector<int> cap, used;
  std::map<int64_t, Placement> live;
  int64_t finished = 0;
  bool ok = true;
  void on_start(const JobView& j, const Placement& p, double) override {
    int sum = 0;
    for (auto& q : p) {
      used[q.machine] += q.gpus;
      sum += q.gpus;
      if (used[q.machine] > cap[q.machine]) ok = false;
    }
    if (sum != j.gpus) ok = false;
    live[j.id] = p;
  }
  void release(int64_t id) {
    for (auto& q : live[id]) used[q.machine] -= q.gpus;
    live.erase(id);
  }
  void on_preempt(const JobView& j, double) override { release(j.id); }
  void on_finish(const JobView& j, double) override { release(j.id), ++finished; }
};

static Trace philly_slice(size_t n) {
  Trace t = read_philly(source_path("data/philly/philly.csv"));
  t.jobs.resize(n);
  return t;
}

static ClusterModel pai_sample(size_t every) {
  PaiResult p = read_pai(source_path("data/pai/pai_machine_spec.csv"));
  ClusterSpec s;
  s.source = p.cluster.source;
  for (size_t i = 0; i < p.cluster.machines.size(); i += every) s.machines.push_back(p.cluster.machines[i]);
  return build_cluster(s, gavel_table());
}

static std::string run_json(const Trace& t, const ClusterModel& c, const std::string& ord, const std::string& pl,
                            uint64_t seed, CapacityChecker* chk) {
  SimOptions o;
  o.model.seed = seed;
  o.drop_oversized = true;
  Simulator sim(t, c, gavel_table(), nullptr, o);
  auto f = make_ordering(ord);
  auto p = make_placement(pl, seeded(seed));
  sim.set_policies(f.get(), p.get());
  if (chk) sim.set_observer(chk);
  SimResult r = sim.run();
  if (chk) ck_assert_int_eq(chk->finished, static_cast<int64_t>(t.jobs.size()) - sim.dropped_jobs());
  ck_assert_int_eq(r.jobs + sim.dropped_jobs(), static_cast<int64_t>(t.jobs.size()));
  return to_json(r, false).dump();
}

START_TEST(real_slice_invariants) {
  static const char* pairs[][2] = {
      {"fifo", "first-fit"},      {"sjf-oracle", "best-fit"},       {"qssf", "least-loaded"},
      {"tiresias-las", "random"}, {"multifactor", "fastest-first"}, {"srtf-oracle", "first-fit"}};
  Trace t = philly_slice(1500);
  ClusterModel c = pai_sample(20);
  for (auto& pr : pairs) {
    CapacityChecker chk;
    for (const auto& m : c.machines) chk.cap.push_back(m.gpus);
    chk.used.assign(c.machines.size(), 0);
    run_json(t, c, pr[0], pr[1], 7, &chk);
    ck_assert_msg(chk.ok, "%s/%s allocated more GPUs than exist", pr[0], pr[1]);
    ck_assert_msg(chk.live.empty(), "%s/%s left jobs running", pr[0], pr[1]);
  }
}
END_TEST

START_TEST(same_seed_same_json) {
  Trace t = philly_slice(1500);
  ClusterModel c = pai_sample(20);
  for (const char* pl : {"random", "first-fit"}) {
    std::string a = run_json(t, c, "tiresias-las", pl, 3, nullptr);
    std::string b = run_json(t, c, "tiresias-las", pl, 3, nullptr);
    ck_assert_str_eq(a.c_str(), b.c_str());
    std::string d = run_json(t, c, "tiresias-las", pl, 4, nullptr);
    ck_assert_str_ne(a.c_str(), d.c_str());
  }
}
END_TEST

int main() {
  Suite* s = suite_create("policy_sim");
  TCase* hand = tcase_create("hand_computed");
  tcase_add_test(hand, fifo_blocks_head_of_line);
  tcase_add_test(hand, tiresias_queues_and_jump_time);
  tcase_add_test(hand, sjf_oracle_runs_short_first);
  tcase_add_test(hand, best_fit_consolidates);
  tcase_add_test(hand, colocation_slows_both);
  tcase_add_test(hand, cross_machine_and_cross_rack_penalty);
  tcase_add_test(hand, gpu_type_speed_and_constraint);
  tcase_add_test(hand, srtf_preempts_long_job);
  tcase_add_test(hand, oversized_job_is_an_error_or_dropped);
  tcase_add_test(hand, joint_policy_and_step_api);
  tcase_add_test(hand, stuck_jobs_are_an_error);
  tcase_add_test(hand, huge_times_are_refused_not_run_forever);
  suite_add_tcase(s, hand);
  TCase* real = tcase_create("real_slice");
  tcase_set_timeout(real, 120);
  tcase_add_test(real, real_slice_invariants);
  tcase_add_test(real, same_seed_same_json);
  suite_add_tcase(s, real);
  return test_support::run_suite(s);
}
