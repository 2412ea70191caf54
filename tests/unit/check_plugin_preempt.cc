// Preemption by a preemptive model, Slurm-free: the plan (which running jobs
// are preempted, as the simulator keeps a ranked prefix), the limits, and
// the preemption part of a job's explanation.
#include <string>
#include <vector>

#include "plugins/seam/explain.h"
#include "plugins/seam/preempt_plan.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/ck_string.h"
#include "tests/unit/run_suite.h"

using namespace duet::plugin;


PlanJob running(double score, uint32_t gpus, bool pinned = false) { return {score, gpus, true, pinned, true}; }
PlanJob pending(double score, uint32_t gpus, bool eligible = true) { return {score, gpus, false, false, eligible}; }

// 8 GPUs: a 4-GPU running job ranked below three pending jobs (6 GPUs) does
// not fit what they leave: preempted; the 2-GPU running job ranked first stays.
START_TEST(test_plan_keeps_ranked_prefix) {
  std::vector<PlanJob> jobs = {running(5, 2), running(-1, 4), pending(3, 2), pending(2, 2), pending(1, 2)};
  PreemptPlan p = plan_preemption(jobs, 8, 10);
  ck_assert_uint_eq(p.preempt.size(), 1);
  ck_assert_uint_eq(p.preempt[0], 1);
  ck_assert_uint_eq(p.kept_pending, 3);
  ck_assert(p.keep[0] && !p.keep[1] && p.keep[2] && p.keep[3] && p.keep[4]);
  ck_assert_uint_eq(p.rank[0], 1);
  ck_assert_uint_eq(p.rank[1], 5);
  ck_assert_uint_eq(p.rank[4], 4);
  // a job that does not fit is skipped, later ones still kept (as the simulator)
  jobs = {running(0, 4), pending(3, 6), pending(2, 2)};
  p = plan_preemption(jobs, 8, 10);
  ck_assert(p.keep[1] && p.keep[2] && !p.keep[0]);
  ck_assert_uint_eq(p.preempt.size(), 1);
}
END_TEST

START_TEST(test_plan_pins_and_limits) {
  // the lower-ranked running job cannot be preempted: it holds its GPUs, and
  // the better-ranked one goes instead
  std::vector<PlanJob> jobs = {running(1, 4), running(-5, 4, true), pending(3, 4)};
  PreemptPlan p = plan_preemption(jobs, 8, 10);
  ck_assert_uint_eq(p.preempt.size(), 1);
  ck_assert_uint_eq(p.preempt[0], 0);
  ck_assert(p.keep[1]);
  // every running job pinned: nothing is preempted
  jobs = {running(1, 4, true), running(-5, 4, true), pending(3, 4)};
  ck_assert(plan_preemption(jobs, 8, 10).preempt.empty());
  // at most max_preempt, the lowest-ranked first
  jobs = {running(-1, 2), running(-3, 2), running(-2, 2), pending(5, 8)};
  p = plan_preemption(jobs, 8, 2);
  ck_assert_uint_eq(p.preempt.size(), 2);
  ck_assert_uint_eq(p.preempt[0], 1);
  ck_assert_uint_eq(p.preempt[1], 2);
}
END_TEST

START_TEST(test_plan_needs_a_pending_job_that_could_start) {
  // the pending job ahead waits for its begin time or a dependency: no gain
  std::vector<PlanJob> jobs = {running(-1, 8), pending(5, 4, false)};
  PreemptPlan p = plan_preemption(jobs, 8, 10);
  ck_assert(p.preempt.empty());
  ck_assert_uint_eq(p.kept_pending, 0);
  ck_assert(p.keep[0]);
  // nothing ranked: nothing to do
  ck_assert(plan_preemption({}, 8, 10).preempt.empty());
  // a pending job too big for the cluster is not kept and preempts nothing
  jobs = {running(-1, 2), pending(5, 16)};
  ck_assert(plan_preemption(jobs, 8, 10).preempt.empty());
}
END_TEST

START_TEST(test_contended) {
  const std::vector<uint32_t> asked = {1, 2};
  ck_assert(!preemption_contended(asked, 3));
  ck_assert(preemption_contended(asked, 2));
  ck_assert(!preemption_contended({}, 0));
}
END_TEST

START_TEST(test_limits) {
  PreemptLimits l;  // 600 s, 3600 s, 3 restarts
  RunningJobState j;
  j.run_s = 700;
  CK_STR_EQ(preempt_blocker(l, j), "");
  j.run_s = 30;
  CK_STR_EQ(preempt_blocker(l, j), "ran 30 s, less than PreemptMinRunTime=600");
  j.run_s = 700;
  j.restarts = 1;
  CK_STR_EQ(preempt_blocker(l, j), "requeued before and ran 700 s since, less than PreemptJobInterval=3600");
  j.run_s = 3600;
  CK_STR_EQ(preempt_blocker(l, j), "");
  j.restarts = 3;
  CK_STR_EQ(preempt_blocker(l, j), "requeued 3 times already, PreemptMaxRestarts=3");
  j.requeueable = false;
  j.not_requeueable = "not requeue-able (--no-requeue)";
  CK_STR_EQ(preempt_blocker(l, j), "not requeue-able (--no-requeue)");
  DuetConf c;
  c.preempt_min_run_time_s = 1;
  c.preempt_job_interval_s = 2;
  c.preempt_max_restarts = 1;
  c.preempt_max_per_rescore = 7;
  const PreemptLimits f = PreemptLimits::from(c);
  ck_assert(f.min_run_time_s == 1 && f.job_interval_s == 2 && f.max_restarts == 1 && f.max_per_rescore == 7);
  RunningJobState fresh;
  fresh.run_s = 5;
  CK_STR_EQ(preempt_blocker(f, fresh), "");
  fresh.restarts = 1;
  CK_STR_EQ(preempt_blocker(f, fresh), "requeued 1 times already, PreemptMaxRestarts=1");
}
END_TEST

// The preemption part stays through re-scores and placements and counts
// up; the placement of the run it ended stays until the next rank text.
START_TEST(test_explain_preemption) {
  const std::string placed = "duet: rank 2/5 score 0.25 by m; nodes node1: r; ranking node1=1";
  ck_assert_uint_eq(explain_preemptions(placed.c_str()), 0);
  CK_STR_EQ(explain_preemption_part(placed.c_str()), "");
  const std::string once = explain_preempted(placed.c_str(), "requeued after 700 s");
  CK_STR_EQ(once,
            "duet: rank 2/5 score 0.25 by m; preempted 1x, last: requeued after 700 s; nodes node1: r; ranking "
            "node1=1");
  ck_assert_uint_eq(explain_preemptions(once.c_str()), 1);
  CK_STR_EQ(explain_preemption_part(once.c_str()), "; preempted 1x, last: requeued after 700 s");
  // pending again: a new rank keeps it (as the ordering host writes it)
  const std::string ranked = explain_rank(1, 3, 4, "m") + explain_preemption_part(once.c_str());
  CK_STR_EQ(ranked, "duet: rank 1/3 score 4 by m; preempted 1x, last: requeued after 700 s");
  // started again: the placement comes after it
  const std::string again = explain_placement(ranked.c_str(), {"node2"}, "r2");
  CK_STR_EQ(again, "duet: rank 1/3 score 4 by m; preempted 1x, last: requeued after 700 s; nodes node2: r2");
  CK_STR_EQ(explain_preemption_part(again.c_str()), "; preempted 1x, last: requeued after 700 s");
  const std::string twice = explain_preempted(again.c_str(), "requeued after 4000 s");
  CK_STR_EQ(twice, "duet: rank 1/3 score 4 by m; preempted 2x, last: requeued after 4000 s; nodes node2: r2");
  ck_assert_uint_eq(explain_preemptions(twice.c_str()), 2);
  CK_STR_EQ(explain_preempted(nullptr, "w"), "duet:; preempted 1x, last: w");
  ck_assert_uint_le(explain_preempted(twice.c_str(), std::string(5000, 'w')).size(), kExplainMaxBytes);
}
END_TEST

int main() {
  Suite* s = suite_create("plugin_preempt");
  TCase* tc = tcase_create("preempt");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_plan_keeps_ranked_prefix);
  tcase_add_test(tc, test_plan_pins_and_limits);
  tcase_add_test(tc, test_plan_needs_a_pending_job_that_could_start);
  tcase_add_test(tc, test_contended);
  tcase_add_test(tc, test_limits);
  tcase_add_test(tc, test_explain_preemption);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
