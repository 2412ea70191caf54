// select/duet's online learning of node speeds (plugins/seam/speed_estimates.h,
// run_history.h): a hostile user's samples move a node's estimate by at most
// the documented bound per hour, whatever their values; all users together
// by at most the node's; the budgets survive a save and restore; the
// expectation a run is measured against comes from the same user's runs on
// other nodes only.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "plugins/seam/run_history.h"
#include "plugins/seam/speed_estimates.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace duet::plugin;

namespace {

constexpr std::uint32_t kHonest = 1000, kHostile = 65534;
constexpr double kEps = 1e-12;

// node2 learned +0.30 from an honest user's samples spread over many hours
// (as the audit's cluster had, issue 52).
SpeedEstimates honest_cluster(std::int64_t* now) {
  SpeedEstimates s;
  std::int64_t t = 0;
  for (int k = 0; k < 40; ++k, t += 900) {
    s.add({"node2", kHonest, 0.30, t});
    s.add({"node4", kHonest, 0.0, t});
  }
  ck_assert_msg(std::abs(s.estimate("node2") - 0.30) < kEps, "node2 %g", s.estimate("node2"));
  ck_assert(s.estimate("node4") == 0);
  *now = t + 3600;  // the honest moves have left the window
  return s;
}

SpeedEstimates round_trip(const SpeedEstimates& s) {
  std::ostringstream out;
  s.save(out);
  SpeedEstimates back(s.limits());
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) ck_assert_msg(back.restore_line(line), "%s", line.c_str());
  return back;
}

}  // namespace

// The audit's attack: the hostile user's jobs claim speeds 1e300 times off,
// eight of them and then hundreds, within an hour: node2 and node4 move by
// at most 0.10 each and 0.20 together; an hour later at most 0.10 more each.
START_TEST(hostile_user_moves_a_node_by_at_most_the_bound) {
  std::int64_t t0 = 0;
  SpeedEstimates s = honest_cluster(&t0);
  const double e2 = s.estimate("node2"), e4 = s.estimate("node4");
  const double huge = std::log(1e300);  // a finite sample as far off as a double allows it
  int refused = 0;
  for (int k = 0; k < 400; ++k) {
    const std::int64_t t = t0 + k * 8;  // 400 jobs within 3200 s
    const SpeedVerdict a = s.add({"node2", kHostile, -huge, t});
    const SpeedVerdict b = s.add({"node4", kHostile, +huge, t});
    refused += (a != SpeedVerdict::kMoved) + (b != SpeedVerdict::kMoved);
    ck_assert(a != SpeedVerdict::kInvalid && b != SpeedVerdict::kInvalid);
    const double d2 = std::abs(s.estimate("node2") - e2), d4 = std::abs(s.estimate("node4") - e4);
    ck_assert_msg(d2 <= 0.10 + kEps && d4 <= 0.10 + kEps && d2 + d4 <= 0.20 + kEps, "after %d: node2 %g node4 %g",
                  k + 1, d2, d4);
  }
  ck_assert_int_ge(refused, 790);  // the budgets were spent by the first few
  ck_assert_msg(std::abs(s.estimate("node2") - (e2 - 0.10)) < kEps, "node2 %g", s.estimate("node2"));
  ck_assert_msg(std::abs(s.estimate("node4") - (e4 + 0.10)) < kEps, "node4 %g", s.estimate("node4"));
  // node2 is still the faster of the two (0.20 apart)
  ck_assert(s.estimate("node2") > s.estimate("node4"));
  // one user's limit across nodes: node3 is not moved by them this hour
  ck_assert(s.add({"node3", kHostile, huge, t0 + 3300}) == SpeedVerdict::kUserLimit);
  ck_assert(s.estimate("node3") == 0);
  // a rolling hour: a move at t0 counts until t0 + 3600, not after
  ck_assert_double_eq(s.budget_left(kHostile, "node2", t0 + 3599), 0);
  ck_assert_double_eq_tol(s.budget_left(kHostile, "node2", t0 + 3600), 0.05, kEps);
  // each further hour of attack: at most 0.10 more
  for (int hour = 1; hour <= 3; ++hour) {
    for (int k = 0; k < 100; ++k) s.add({"node2", kHostile, -huge, t0 + hour * 3600 + k * 30});
    ck_assert_msg(std::abs(s.estimate("node2") - e2) <= 0.10 * (hour + 1) + kEps, "hour %d: %g", hour,
                  s.estimate("node2"));
  }
}
END_TEST

// All users together: at most 0.30 per node and hour, however many.
START_TEST(all_users_together_are_limited_per_node) {
  SpeedEstimates s;
  for (std::uint32_t u = 0; u < 50; ++u) s.add({"node1", 2000 + u, -5, 100 + u});
  ck_assert_msg(std::abs(s.estimate("node1") + 0.30) < kEps, "%g", s.estimate("node1"));
  ck_assert(s.add({"node1", 9999, -5, 200}) == SpeedVerdict::kNodeLimit);
  ck_assert(s.add({"node2", 9999, -5, 200}) == SpeedVerdict::kMoved);
  // never beyond +-2, whatever the time
  SpeedEstimates far;
  for (int k = 0; k < 10000; ++k) far.add({"n", static_cast<std::uint32_t>(k), 50, k * 3600});
  ck_assert_double_eq_tol(far.estimate("n"), 2.0, kEps);
  ck_assert(far.add({"n", 1, 50, 1000000000}) == SpeedVerdict::kNoChange);
}
END_TEST

// Robust: an outlier counts as a sample max_step away; the estimate tracks
// the bulk of the samples, not their mean.
START_TEST(outliers_move_no_more_than_any_sample) {
  SpeedEstimates s;
  std::int64_t t = 0;
  for (int k = 0; k < 200; ++k, t += 600) {
    s.add({"node1", static_cast<std::uint32_t>(k % 7), 0.2, t});
    if (k % 5 == 0) s.add({"node1", 77, -1000, t + 1});  // a fifth of them absurd
  }
  // the mean of the samples is about -160; a median-like centre stays near 0.2
  ck_assert_msg(s.estimate("node1") > 0.1 && s.estimate("node1") <= 0.2 + kEps, "%g", s.estimate("node1"));
  double moved = 0;
  SpeedEstimates one;
  ck_assert(one.add({"x", 1, 1e300, 0}, &moved) == SpeedVerdict::kMoved);
  ck_assert_double_eq_tol(moved, 0.05, kEps);
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()})
    ck_assert(one.add({"x", 1, bad, 0}) == SpeedVerdict::kInvalid);
  ck_assert(one.add({"", 1, 0.1, 0}) == SpeedVerdict::kInvalid);
  ck_assert(one.add({"a b", 1, 0.1, 0}) == SpeedVerdict::kInvalid);
}
END_TEST

// A restart of slurmctld (save, restore) does not refill the budgets.
START_TEST(budgets_survive_save_and_restore) {
  SpeedEstimates s;
  for (int k = 0; k < 10; ++k) s.add({"node2", kHostile, -9, 1000 + k});
  SpeedEstimates back = round_trip(s);
  ck_assert_double_eq_tol(back.estimate("node2"), -0.10, kEps);
  ck_assert_uint_eq(back.recent_moves(), s.recent_moves());
  ck_assert(back.add({"node2", kHostile, -9, 1100}) == SpeedVerdict::kUserNodeLimit);
  ck_assert(back.add({"node2", kHonest, 0.5, 1100}) == SpeedVerdict::kMoved);
  for (const char* bad : {"est node2", "est node2 x", "move 1 2 -0.1 node2", "move 1 2 0.1", "est a b 1", "obs 0 1 n"})
    ck_assert_msg(!SpeedEstimates().restore_line(bad), "'%s' read", bad);
}
END_TEST

// The expectation: the same user's runs of the same name and size, on
// other nodes only, at their nodes' current speeds; the median.
START_TEST(expected_work_from_measured_runs_on_other_nodes) {
  RunHistory h;
  const RunKey k = run_key(kHonest, 1, "train.sh");
  auto speed = [](std::string_view n) { return n == "node2" ? 2.0 : 1.0; };
  ck_assert(!h.expected_work(k, "node1", speed));
  h.record(k, "node1", 100, 1);
  h.record(k, "node1", 110, 2);
  ck_assert(!h.expected_work(k, "node1", speed));  // its own runs: no measure of it
  ck_assert_double_eq(*h.expected_work(k, "node2", speed), 110);  // median of 100, 110 (upper)
  h.record(k, "node2", 40, 3);                                    // 40 s at speed 2: 80 s of work
  ck_assert_double_eq(*h.expected_work(k, "node3", speed), 100);
  // another user, another name, another size: nothing of this key
  ck_assert(!h.expected_work(run_key(kHostile, 1, "train.sh"), "node2", speed));
  ck_assert(!h.expected_work(run_key(kHonest, 1, "train2.sh"), "node2", speed));
  ck_assert(!h.expected_work(run_key(kHonest, 2, "train.sh"), "node2", speed));
  // the latest kRunsPerKey runs per key
  for (int i = 0; i < 20; ++i) h.record(k, "node3", 1000, 10 + i);
  ck_assert_uint_eq(h.runs(), RunHistory::kRunsPerKey);
  // saved without the name's text; restored equal
  std::ostringstream out;
  h.save(out);
  ck_assert(out.str().find("train.sh") == std::string::npos);
  RunHistory back;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) ck_assert(back.restore_line(line));
  ck_assert_double_eq(*back.expected_work(k, "node1", speed), 1000);
  for (const char* bad : {"run 1 1 5 7 -3 node1", "run 1 1 5 7 3", "run x 1 5 7 3 node1", "est n 1"})
    ck_assert_msg(!RunHistory().restore_line(bad), "'%s' read", bad);
  // at most kMaxKeys keys, the least recently run go first
  RunHistory many;
  for (std::uint32_t u = 0; u < RunHistory::kMaxKeys + 10; ++u) many.record(run_key(u, 1, "j"), "n", 5, u);
  ck_assert_uint_eq(many.runs(), RunHistory::kMaxKeys);
}
END_TEST

int main() {
  Suite* s = suite_create("speed_estimates");
  TCase* tc = tcase_create("core");
  tcase_add_test(tc, hostile_user_moves_a_node_by_at_most_the_bound);
  tcase_add_test(tc, all_users_together_are_limited_per_node);
  tcase_add_test(tc, outliers_move_no_more_than_any_sample);
  tcase_add_test(tc, budgets_survive_save_and_restore);
  tcase_add_test(tc, expected_work_from_measured_runs_on_other_nodes);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
