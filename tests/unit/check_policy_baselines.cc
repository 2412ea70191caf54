// Baseline policies through the public interfaces only (policy/core/policy.h),
// as the Slurm plugins and trainers call them.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "policy/baselines/dlas.h"
#include "policy/baselines/gittins.h"
#include "policy/baselines/placement.h"
#include "policy/core/policy.h"
#include "policy/registry/policy_registry.h"
#include "policy/util/gittins_index.h"

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

static JobView job(int64_t id, int gpus, double submit, double dur = 100, const char* user = "u") {
  JobView j;
  j.id = id;
  j.gpus = gpus;
  j.submit_s = submit;
  j.oracle_duration_s = dur;
  j.oracle_remaining_s = dur;
  j.user = user;
  return j;
}

struct Cluster {
  std::vector<std::string> types{"V100", "K80"};
  std::vector<MachineView> machines;
  ClusterView view(double now = 0) {
    ClusterView c;
    c.now_s = now;
    c.gpu_types = types;
    c.machines = machines;
    for (auto& m : machines) c.total_gpus += m.total_gpus, c.free_gpus += m.free_gpus;
    return c;
  }
  void add(const char* name, int type, int total, int free, double speed = 1, int jobs = 0) {
    MachineView m;
    m.name = name;
    m.gpu_type = type;
    m.total_gpus = total;
    m.free_gpus = free;
    m.speed = speed;
    m.jobs = jobs;
    machines.push_back(m);
  }
};

static std::vector<size_t> rank(const char* name, const std::vector<JobView>& jobs, const ClusterView& c) {
  auto p = make_ordering(name);
  std::vector<size_t> order;
  p->rank(jobs, c, order);
  return order;
}

START_TEST(registry_knows_every_baseline) {
  for (const char* n :
       {"fifo", "sjf-oracle", "srtf-oracle", "qssf", "tiresias-las", "tiresias-dlas", "multifactor", "gittins"})
    ck_assert_str_eq(make_ordering(n)->name().c_str(), n);
  for (const char* n : {"first-fit", "best-fit", "least-loaded", "random", "fastest-first"})
    ck_assert_str_eq(make_placement(n, seeded(1))->name().c_str(), n);
  bool threw = false;
  try {
    make_ordering("nope");
  } catch (const std::invalid_argument& e) { threw = std::string(e.what()).find("fifo") != std::string::npos; }
  ck_assert(threw);
  ck_assert(make_ordering("fifo")->blocking());
  ck_assert(make_ordering("sjf-oracle")->oracle());
  ck_assert(make_ordering("srtf-oracle")->preemptive());
  ck_assert(make_ordering("tiresias-las")->preemptive());
  ck_assert(make_ordering("tiresias-dlas")->preemptive());
  ck_assert(make_ordering("gittins")->preemptive());
  ck_assert(!make_ordering("gittins")->oracle());
  ck_assert(!make_ordering("qssf")->oracle());
}
END_TEST

START_TEST(orderings_rank_as_documented) {
  Cluster cl;
  cl.add("a", 0, 8, 8);
  std::vector<JobView> jobs{job(1, 1, 10, 300), job(2, 8, 5, 50), job(3, 2, 20, 10)};
  jobs[2].oracle_remaining_s = 200;  // ran long ago? remaining differs from duration
  auto fifo = rank("fifo", jobs, cl.view());
  ck_assert(fifo == (std::vector<size_t>{1, 0, 2}));
  auto sjf = rank("sjf-oracle", jobs, cl.view());
  ck_assert(sjf == (std::vector<size_t>{2, 1, 0}));
  auto srtf = rank("srtf-oracle", jobs, cl.view());
  ck_assert(srtf == (std::vector<size_t>{1, 2, 0}));
  // DLAS, first decision: everything in Q0 in arrival order.
  auto las = rank("tiresias-las", jobs, cl.view());
  ck_assert(las == (std::vector<size_t>{1, 0, 2}));
  // Multifactor at now = 7 days: ages saturate equally, small jobs first.
  auto mf = rank("multifactor", jobs, cl.view(7 * 86400.0 + 20));
  ck_assert(mf == (std::vector<size_t>{0, 2, 1}));
}
END_TEST

// A job seen by a DLAS policy at a decision: run and waited seconds so far.
static JobView seen(int64_t id, int gpus, double submit, bool running, double run_s, double wait_s) {
  JobView j = job(id, gpus, submit);
  j.running = running, j.run_s = run_s, j.wait_s = wait_s;
  return j;
}

START_TEST(dlas_queues_by_seconds_or_gpu_seconds) {
  // 4 GPUs. Job 1 (4 GPUs) alone at 0; at 813 s it has 3252 GPU-seconds
  // (past Q0's 3250) but 813 seconds; job 2 (1 GPU) arrived at 800.
  Cluster cl;
  cl.add("a", 0, 4, 4);
  for (bool gpu_time : {true, false}) {
    auto p = make_dlas(gpu_time);
    std::vector<size_t> order;
    p->rank(std::vector<JobView>{seen(1, 4, 0, false, 0, 0)}, cl.view(0), order);
    ck_assert(order == (std::vector<size_t>{0}));
    // Next decision: when job 1 reaches the Q0 limit.
    ck_assert_double_eq(p->next_decision_s(), gpu_time ? 813 : 3250);
    std::vector<JobView> jobs{seen(1, 4, 0, true, 813, 0), seen(2, 1, 800, false, 0, 13)};
    p->rank(jobs, cl.view(813), order);
    if (gpu_time) {  // 1 fell to Q1: 2 runs, 1 (4 GPUs) no longer fits
      ck_assert(order == (std::vector<size_t>{1, 0}));
      ck_assert_double_eq(p->next_decision_s(), 813 + 3250);  // 2 leaves Q0
    } else {                                                  // both in Q0, the running one first
      ck_assert(order == (std::vector<size_t>{0, 1}));
      ck_assert_double_eq(p->next_decision_s(), 3250);
    }
  }
  // Three queues: past 7200 GPU-seconds a job falls behind one in Q1.
  auto p = make_dlas(true);
  std::vector<size_t> order;
  p->rank(std::vector<JobView>{seen(1, 1, 0, false, 0, 0), seen(2, 1, 0, false, 0, 0)}, cl.view(0), order);
  p->rank(
      std::vector<JobView>{seen(1, 1, 0, true, 7200, 0), seen(2, 1, 0, true, 4000, 0), seen(3, 4, 7100, false, 0, 100)},
      cl.view(7200), order);
  ck_assert(order == (std::vector<size_t>{2, 1, 0}));
}
END_TEST

START_TEST(dlas_starvation_promotion) {
  // One GPU, DLAS on seconds. Job 1 runs 0..3250 and falls to Q1; job 2
  // arrives at 3250 (Q0) and takes the GPU. With knob K = 0.5, job 1 is
  // promoted back to Q0 after waiting 0.5 x 3250 = 1625 s (at 4875), so job 3
  // arriving at 5000 queues behind it; without promotion job 3 goes first.
  Cluster cl;
  cl.add("a", 0, 1, 1);
  for (double knob : {0.5, 0.0}) {
    auto p = make_dlas(false, knob);
    std::vector<size_t> order;
    p->rank(std::vector<JobView>{seen(1, 1, 0, false, 0, 0)}, cl.view(0), order);
    p->rank(std::vector<JobView>{seen(1, 1, 0, true, 3250, 0), seen(2, 1, 3250, false, 0, 0)}, cl.view(3250), order);
    ck_assert(order == (std::vector<size_t>{1, 0}));
    ck_assert_double_eq(p->next_decision_s(), knob > 0 ? 4875 : 6500);
    if (knob > 0) {
      p->rank(std::vector<JobView>{seen(1, 1, 0, false, 3250, 1625), seen(2, 1, 3250, true, 1625, 0)}, cl.view(4875),
              order);
      ck_assert(order == (std::vector<size_t>{1, 0}));  // 2 runs in Q0, 1 behind it
      ck_assert_double_eq(p->next_decision_s(), 6500);  // 2 leaves Q0
    }
    std::vector<JobView> jobs{seen(1, 1, 0, false, 3250, 1750), seen(2, 1, 3250, true, 1750, 0),
                              seen(3, 1, 5000, false, 0, 0)};
    p->rank(jobs, cl.view(5000), order);
    ck_assert(order == (knob > 0 ? std::vector<size_t>{1, 0, 2} : std::vector<size_t>{1, 2, 0}));
  }
}
END_TEST

START_TEST(qssf_learns_from_history) {
  auto q = make_ordering("qssf");
  Cluster cl;
  cl.add("a", 0, 8, 8);
  q->on_finish(job(10, 1, 0, 0, "alice"), 1000);  // alice's 1-GPU jobs are long
  q->on_finish(job(11, 1, 0, 0, "bob"), 10);      // bob's are short
  std::vector<JobView> jobs{job(1, 1, 0, 0, "alice"), job(2, 1, 5, 0, "bob")};
  std::vector<size_t> order;
  q->rank(jobs, cl.view(), order);
  ck_assert(order == (std::vector<size_t>{1, 0}));
  // Unknown user: falls back to same GPU count (mean 505 s) x 1 GPU vs alice 1000.
  jobs.push_back(job(3, 1, 9, 0, "carol"));
  q->rank(jobs, cl.view(), order);
  ck_assert(order == (std::vector<size_t>{1, 2, 0}));
}
END_TEST

// The Gittins rank of a log-normal duration against what it must be.
START_TEST(gittins_rank_of_a_log_normal) {
  // Nearly deterministic: run to completion, rank = the duration itself.
  ck_assert_double_eq_tol(gittins_rank_s(3600, 0.05, 0), 3600 * std::exp(0.05 * 0.05 / 2), 5);
  // Never above the mean (the quantum "to completion" gives the mean).
  for (double sigma : {0.5, 1.0, 1.5, 2.5}) {
    const double mean = 3600 * std::exp(sigma * sigma / 2);
    ck_assert(gittins_rank_s(3600, sigma, 0) <= mean * 1.001);
  }
  // Scale-free: seconds in, seconds out.
  ck_assert_double_eq_tol(gittins_rank_s(36000, 1.5, 40000) / gittins_rank_s(3600, 1.5, 4000), 10, 1e-6);
  // A heavy spread: a job far past its median has much more to go (rank
  // grows with attained service there, as LAS would have it).
  double last = gittins_rank_s(3600, 1.5, 3600);
  for (double a : {10000.0, 36000.0, 360000.0}) {
    const double r = gittins_rank_s(3600, 1.5, a);
    ck_assert_msg(r > last, "rank at %g s: %g, not above %g", a, r, last);
    last = r;
  }
  // Hostile inputs rank last and stay finite (sorting needs a total order).
  for (double bad : {NAN, INFINITY, -INFINITY}) {
    ck_assert(gittins_rank_s(bad, 1, 0) == std::numeric_limits<double>::max());
    ck_assert(gittins_rank_s(3600, bad, 0) == std::numeric_limits<double>::max());
    ck_assert(gittins_rank_s(3600, 1, bad) == std::numeric_limits<double>::max());
  }
  ck_assert(std::isfinite(gittins_rank_s(0, 0, 0)) && std::isfinite(gittins_rank_s(-5, -1, -1)));
  // The table the schedulers read against the numerical minimum, over
  // spreads and attained service from nothing to far in the tail.
  double worst = 0;
  for (double sigma = 0.07; sigma < 5; sigma *= 1.37)
    for (double a : {0.0, 1.0, 30.0, 600.0, 3000.0, 3600.0, 9000.0, 1e5, 1e6, 1e7}) {
      const double exact = gittins_rank_exact_s(3600, sigma, a), table = gittins_rank_s(3600, sigma, a);
      worst = std::max(worst, std::abs(table / exact - 1));
    }
  ck_assert_msg(worst < 0.015, "table off by %.4f", worst);
}
END_TEST

// The gittins ordering: history per user, GPU-seconds per completion, and a
// running job kept unless a pending one ranks below half of it.
START_TEST(gittins_orders_by_rank_with_running_credit) {
  auto g = make_ordering("gittins");
  Cluster cl;
  cl.add("a", 0, 8, 8);
  for (int i = 0; i < 4; ++i) {
    g->on_finish(job(100 + i, 1, 0, 0, "alice"), 20000 + 100 * i);  // alice's jobs are long
    g->on_finish(job(200 + i, 1, 0, 0, "bob"), 60 + i);             // bob's are short
  }
  std::vector<JobView> jobs{job(1, 1, 0, 0, "alice"), job(2, 1, 5, 0, "bob"), job(3, 8, 9, 0, "bob")};
  std::vector<size_t> order;
  g->rank(jobs, cl.view(), order);
  // bob's 1-GPU job, then his 8-GPU one (8x the GPU-seconds), then alice's.
  ck_assert(order == (std::vector<size_t>{1, 2, 0}));
  // alice's job running, past nothing unusual: kept ahead of a new one of hers.
  std::vector<JobView> two{seen(1, 1, 0, true, 1000, 0), job(4, 1, 1000, 0, "alice")};
  two[0].user = "alice";
  g->rank(two, cl.view(), order);
  ck_assert(order == (std::vector<size_t>{0, 1}));
}
END_TEST

START_TEST(placements_choose_as_documented) {
  Cluster cl;
  cl.add("a", 0, 8, 3, 1.0, 2);
  cl.add("b", 0, 8, 2, 1.0, 1);
  cl.add("c", 1, 8, 8, 0.3, 0);
  cl.add("d", 0, 8, 6, 1.2, 1);
  ClusterView v = cl.view();
  JobView j = job(1, 2, 0);
  ck_assert_int_eq((*make_placement("first-fit")->place(j, v))[0].machine, 0);
  ck_assert_int_eq((*make_placement("best-fit")->place(j, v))[0].machine, 1);
  ck_assert_int_eq((*make_placement("least-loaded")->place(j, v))[0].machine, 2);
  ck_assert_int_eq((*make_placement("fastest-first")->place(j, v))[0].machine, 3);
  // Type constraint: V100 only (bit 0) keeps least-loaded off the K80 machine.
  j.type_mask = 1;
  ck_assert_int_eq((*make_placement("least-loaded")->place(j, v))[0].machine, 3);
  // Random stays on machines that fit and is seeded.
  auto r1 = make_placement("random", seeded(9)), r2 = make_placement("random", seeded(9));
  for (int i = 0; i < 20; ++i) {
    Placement a = *r1->place(j, v), b = *r2->place(j, v);
    ck_assert(a == b);
    ck_assert(a[0].machine != 2);
  }
  // Spread: 10 V100 GPUs over a, b, d (11 free) in first-fit order.
  JobView big = job(2, 10, 0);
  big.type_mask = 1;
  Placement p = *make_placement("first-fit")->place(big, v);
  ck_assert_int_eq(p.size(), 3);
  ck_assert(p[0] == (PlacementPart{0, 3}) && p[1] == (PlacementPart{1, 2}) && p[2] == (PlacementPart{3, 5}));
  // best-fit spreads over the most-free machines first: d (6), a (3), b (1).
  Placement q = *make_placement("best-fit")->place(big, v);
  ck_assert(q[0] == (PlacementPart{3, 6}) && q[1] == (PlacementPart{0, 3}) && q[2] == (PlacementPart{1, 1}));
  big.gpus = 12;
  ck_assert(!make_placement("first-fit")->place(big, v).has_value());
}
END_TEST

int main() {
  Suite* s = suite_create("policy_baselines");
  TCase* tc = tcase_create("baselines");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, registry_knows_every_baseline);
  tcase_add_test(tc, orderings_rank_as_documented);
  tcase_add_test(tc, dlas_queues_by_seconds_or_gpu_seconds);
  tcase_add_test(tc, dlas_starvation_promotion);
  tcase_add_test(tc, qssf_learns_from_history);
  tcase_add_test(tc, placements_choose_as_documented);
  tcase_add_test(tc, gittins_rank_of_a_log_normal);
  tcase_add_test(tc, gittins_orders_by_rank_with_running_credit);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
