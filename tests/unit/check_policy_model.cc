// Performance model: Gavel ratios, fitted variability re-fitted from the data,
// job type rule, machine factors and fluctuation, ideal mode.
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

#include "policy/io/cluster.h"
#include "policy/model/gavel.h"
#include "policy/io/minibatch.h"
#include "policy/model/cluster_model.h"
#include "policy/model/job_types.h"
#include "policy/model/perf_model.h"
#include "policy/model/variability.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using test_support::gavel_table;
using test_support::source_path;

static ClusterModel cluster(const std::string& text) {
  std::istringstream in(text);
  return build_cluster(read_cluster(in, "c.csv"), gavel_table());
}

START_TEST(gavel_ratios) {
  const ThroughputTable& t = gavel_table();
  int a = t.find_job_type("ResNet-50 (batch size 32)");
  ck_assert_int_ge(a, 0);
  ck_assert_double_eq_tol(t.speed_ratio(a, t.find_gpu("p100")), 4.888323684976709 / 7.787264918596293, 1e-12);
  ck_assert_double_eq_tol(t.speed_ratio(a, t.find_gpu("k80")), 1.236568777004088 / 7.787264918596293, 1e-12);
  ck_assert_double_eq(t.speed_ratio(a, t.reference_gpu()), 1.0);
  ck_assert_double_eq_tol(t.spread_factor(a, 3, t.reference_gpu()), 22.82976391752828 / 24.067423556662327, 1e-12);
  ck_assert_double_eq(t.spread_factor(a, 0, t.reference_gpu()), 1.0);
  for (int j = 0; j < t.job_types(); ++j)
    for (int k = 0; k < t.job_types(); ++k) {
      double c = t.colocation(j, k, t.reference_gpu());
      ck_assert(c >= 0 && c <= 1);
    }
  ck_assert_int_eq(t.job_types_at_scale(0).size(), 26);
  ck_assert_int_gt(t.job_types_at_scale(3).size(), 0);
  ck_assert_int_lt(t.job_types_at_scale(3).size(), 26);
}
END_TEST

START_TEST(variability_refits_from_data) {
  std::vector<MinibatchJob> jobs;
  for (int i = 1; i <= 4; ++i)
    jobs.push_back(read_minibatch(source_path("data/alibaba-minibatch/job_" + std::to_string(i) + "_norm.csv")));
  Variability v = fit_variability(jobs);
  ck_assert_double_eq_tol(v.speed_sigma, kFittedVariability.speed_sigma, 5e-4);
  ck_assert_double_eq_tol(v.ar_phi, kFittedVariability.ar_phi, 5e-3);
  ck_assert_double_eq_tol(v.ar_sigma, kFittedVariability.ar_sigma, 5e-4);
}
END_TEST

START_TEST(job_type_rule_is_seeded_and_scale_aware) {
  const ThroughputTable& t = gavel_table();
  JobSpec j;
  j.id = 42;
  j.gpus = 8;
  int a = assign_job_type(j, t, 1);
  ck_assert_int_eq(assign_job_type(j, t, 1), a);
  bool measured = false;
  for (int k : t.job_types_at_scale(3)) measured |= k == a;
  ck_assert(measured);
  int differs = 0;
  for (int64_t id = 0; id < 50; ++id) {
    j.id = id;
    differs += assign_job_type(j, t, 1) != assign_job_type(j, t, 2);
  }
  ck_assert_int_gt(differs, 10);
  j.job_type = "LM (batch size 20)";
  ck_assert_int_eq(assign_job_type(j, t, 1), t.find_job_type("LM (batch size 20)"));
  j.job_type = "NoSuchNet";
  j.line = 9;
  bool threw = false;
  try {
    assign_job_type(j, t, 1, "trace.csv");
  } catch (const std::exception& e) { threw = std::string(e.what()).find("trace.csv:9") != std::string::npos; }
  ck_assert(threw);
}
END_TEST

START_TEST(machine_factors_seeded_and_bounded) {
  std::string text = "machine,gpu_type,num_gpus\n";
  for (int i = 0; i < 400; ++i) text += "m" + std::to_string(i) + ",V100,8\n";
  ClusterModel c = cluster(text);
  ModelOptions o;
  o.seed = 5;
  PerfModel a(gavel_table(), c, o), b(gavel_table(), c, o);
  double lsum = 0, lsq = 0;
  for (int m = 0; m < 400; ++m) {
    ck_assert_double_eq(a.machine_factor(m), b.machine_factor(m));
    ck_assert(a.machine_factor(m) >= 0.5 && a.machine_factor(m) <= 1.5);
    double l = std::log(a.machine_factor(m));
    lsum += l, lsq += l * l;
  }
  double sd = std::sqrt(lsq / 400 - (lsum / 400) * (lsum / 400));
  ck_assert_double_eq_tol(sd, kFittedVariability.speed_sigma, 0.015);
  // Fluctuation: stationary spread near ar_sigma, lag-1 correlation near phi.
  double xs = 0, xx = 0, xy = 0;
  int n = 0;
  for (int step = 0; step < 200; ++step) {
    std::vector<double> before(400);
    for (int m = 0; m < 400; ++m) before[m] = std::log(a.fluctuation(m));
    a.advance_fluctuation();
    for (int m = 0; m < 400; ++m) {
      double x = before[m], y = std::log(a.fluctuation(m));
      xs += x, xx += x * x, xy += x * y, ++n;
    }
  }
  ck_assert_double_eq_tol(std::sqrt(xx / n), kFittedVariability.ar_sigma, 0.005);
  ck_assert_double_eq_tol(xy / xx, kFittedVariability.ar_phi, 0.03);
  // Ideal: every factor is 1.
  o.ideal = true;
  PerfModel ideal(gavel_table(), c, o);
  Placement p{{0, 4}, {1, 4}};
  ideal.add_job(0, 0);
  ideal.add_job(0, 1);
  ideal.add_job(1, 1);
  ck_assert_double_eq(ideal.rate(1, 8, p), 1.0);
  ck_assert_double_eq(ideal.machine_factor(3), 1.0);
}
END_TEST

START_TEST(known_speed_reflects_type) {
  ClusterModel c = cluster("machine,gpu_type,num_gpus,speed\nv,V100,8,\nk,K80,8,\nt,T4,2,0.52\n");
  ModelOptions o;
  o.ideal = true;
  PerfModel m(gavel_table(), c, o);
  ck_assert_double_eq_tol(m.known_speed(0), 1.0, 1e-12);
  ck_assert(m.known_speed(1) < 0.5);
  ck_assert_double_eq(m.known_speed(2), 0.52);
}
END_TEST

int main() {
  Suite* s = suite_create("policy_model");
  TCase* tc = tcase_create("model");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, gavel_ratios);
  tcase_add_test(tc, variability_refits_from_data);
  tcase_add_test(tc, job_type_rule_is_seeded_and_scale_aware);
  tcase_add_test(tc, machine_factors_seeded_and_bounded);
  tcase_add_test(tc, known_speed_reflects_type);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
