// duet report --sacct: the sacct reader (errors with line and column) and the
// metrics computed from accounting records; duet explain's readers.
#include <sstream>
#include <stdexcept>
#include <string>

#include "policy/io/csv.h"
#include "replay/job_explanation.h"
#include "replay/sacct.h"
#include "replay/sacct_metrics.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::replay;

static const char* kGood =
    "JobID|Submit|Start|End|NodeList|AllocTRES|State\n"
    "10|2026-01-01T00:00:00|2026-01-01T00:00:10|2026-01-01T00:01:10|node1|billing=1,cpu=1,gres/gpu:v100=2,gres/"
    "gpu=2,node=1|COMPLETED\n"
    "11|2026-01-01T00:00:05|2026-01-01T00:00:05|2026-01-01T00:00:35|node3|cpu=1,gres/gpu=1,node=1|COMPLETED\n"
    "12|2026-01-01T00:00:06|Unknown|Unknown|None assigned||CANCELLED by 0\n"
    "13|2026-01-01T00:00:07|2026-01-01T00:00:08|Unknown|node2|gres/gpu:p100=4,gres/gpu=4|RUNNING\n";

START_TEST(parses_rows) {
  std::istringstream in(kGood);
  auto jobs = parse_sacct(in, "t");
  ck_assert_int_eq(jobs.size(), 4);
  ck_assert_str_eq(jobs[0].job_id.c_str(), "10");
  ck_assert_int_eq(jobs[0].gpus, 2);
  ck_assert_int_eq(jobs[0].gpus_by_type.at("v100"), 2);
  ck_assert(jobs[0].end - jobs[0].start == 60);
  ck_assert(jobs[2].start < 0 && jobs[2].end < 0);
  ck_assert_int_eq(jobs[3].line, 5);
}
END_TEST

START_TEST(metrics_match_times) {
  std::istringstream in(kGood);
  auto jobs = parse_sacct(in, "t");
  PriceTable prices;
  prices.add({"V100", 3.6, 300});
  prices.add({"K80", 0.36, 150});
  prices.add({"default", 1, 100});
  SacctCounts c;
  SimResult r = metrics_from_sacct(jobs, prices, 8, 2.0, {{"node3", "k80"}}, &c);
  ck_assert_int_eq(c.finished, 2);
  ck_assert_int_eq(c.not_started, 1);
  ck_assert_int_eq(c.not_ended, 1);
  ck_assert_int_eq(r.jobs, 2);
  // JCTs 70 s and 30 s, times scale 2
  ck_assert_double_eq_tol(r.avg_jct_s, 100.0, 1e-9);
  ck_assert_double_eq_tol(r.p95_jct_s, 140.0, 1e-9);
  ck_assert_double_eq_tol(r.avg_queue_s, 10.0, 1e-9);
  ck_assert_double_eq_tol(r.makespan_s, 140.0, 1e-9);  // 00:00:00 .. 00:01:10
  // busy: 2 GPUs x 120 s + 1 x 60 s = 300 GPU-s
  ck_assert_double_eq_tol(r.busy_gpu_s, 300.0, 1e-9);
  ck_assert_double_eq_tol(r.gpu_util, 300.0 / (8 * 140.0), 1e-9);
  // fees: v100 240 GPU-s x 3.6/h = 0.24; untyped on node3 -> k80 60 GPU-s x 0.36/h = 0.006
  ck_assert_double_eq_tol(r.fees_usd, 0.246, 1e-9);
  ck_assert(!r.samples.empty());
}
END_TEST

// sacct -D: job 20 was preempted (requeued) once and ran again; a requeue
// resets Submit. Job 21 is requeued and pending again: not ended.
START_TEST(requeued_runs_are_one_job) {
  std::istringstream in(
      "JobID|Submit|Start|End|NodeList|AllocTRES|State\n"
      "20|2026-01-01T00:00:00|2026-01-01T00:00:10|2026-01-01T00:00:40|node1|gres/gpu:v100=2,gres/gpu=2|PREEMPTED\n"
      "21|2026-01-01T00:00:01|2026-01-01T00:00:02|2026-01-01T00:00:12|node2|gres/gpu:v100=1,gres/gpu=1|PREEMPTED\n"
      "20|2026-01-01T00:00:41|2026-01-01T00:01:00|2026-01-01T00:01:30|node1|gres/gpu:v100=2,gres/gpu=2|COMPLETED\n"
      "21|2026-01-01T00:00:13|Unknown|Unknown|None assigned||PENDING\n");
  auto rows = parse_sacct(in, "t");
  PriceTable prices;
  prices.add({"V100", 3.6, 300});
  SacctCounts c;
  SimResult r = metrics_from_sacct(rows, prices, 4, 1.0, {}, &c);
  ck_assert_int_eq(c.finished, 1);
  ck_assert_int_eq(c.not_ended, 1);
  ck_assert_int_eq(c.not_started, 0);
  ck_assert_int_eq(c.requeued, 1);
  ck_assert_int_eq(c.non_completed, 0);  // its last run completed
  ck_assert_int_eq(r.preemptions, 1);
  ck_assert_double_eq_tol(r.avg_jct_s, 90.0, 1e-9);    // first Submit to last End
  ck_assert_double_eq_tol(r.avg_queue_s, 10.0, 1e-9);  // to its first start
  // both runs of 20: 2 GPUs x 60 s (21, not ended, is reported apart)
  ck_assert_double_eq_tol(r.busy_gpu_s, 120.0, 1e-9);
  ck_assert_double_eq_tol(r.fees_usd, 120.0 / 3600 * 3.6, 1e-9);
  // while 20 waited for its second run it was queued again, its GPUs free
  bool requeued_wait = false;
  for (const Sample& s : r.samples)
    if (s.t == 40) requeued_wait = s.queued == 1 && s.running == 0 && s.busy_gpus == 0;
  ck_assert_msg(requeued_wait, "at 40 s: job 20 (requeued) queued, nothing running");
}
END_TEST

static std::string error_of(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_sacct(in, "s.txt");
  } catch (const InputError& e) { return e.what(); }
  return "";
}

START_TEST(errors_name_line) {
  std::string h = "JobID|Submit|Start|End|NodeList|AllocTRES|State\n";
  std::string e = error_of(h + "1|2026-01-01T00:00:00|x|Unknown|n||PENDING\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("Start") != std::string::npos, "%s", e.c_str());
  e = error_of(h + "1|2026-01-01T00:00:00|None\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("expected 7") != std::string::npos, "%s", e.c_str());
  e = error_of("JobID|Submit|Start|End|NodeList|State\n");
  ck_assert_msg(e.find("AllocTRES") != std::string::npos, "%s", e.c_str());
  e = error_of(h + "\n1.batch|2026-01-01T00:00:00|None|None|n||PENDING\n");
  ck_assert_msg(e.find("s.txt:3:") == 0 && e.find("-X") != std::string::npos, "%s", e.c_str());
  e = error_of(h + "1|2026-01-01T00:00:00|None|None|n|gres/gpu=two|PENDING\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("GPU count") != std::string::npos, "%s", e.c_str());
  e = error_of(h + "1|2026-01-01T00:00:00|None|None|n|gres/gpu:v 100=2|PENDING\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("GPU type") != std::string::npos, "%s", e.c_str());
  e = error_of(h + "1|2026-01-01T00:00:00|None|None|n|gres/gpu:a=1048576,gres/gpu:b=1|PENDING\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("more than 1048576") != std::string::npos, "%s", e.c_str());
  ck_assert(error_of("").find("empty input") != std::string::npos);
}
END_TEST

START_TEST(explanation_readers) {
  // squeue --json as Slurm 22.05.8 prints it (members trimmed): job 42's
  // user-written fields hold text that looks like Slurm's own (issue 52);
  // job 420 comes after it with another explanation
  const char* ctld = R"J({"meta": {"plugin": {"type": "openapi\/v0.0.38"}}, "errors": [], "jobs": [
    {"job_id": 41, "job_state": "PENDING", "nodes": "", "priority": 1, "system_comment": "",
     "array_job_id": 0, "array_task_id": null},
    {"job_id": 42, "job_state": "RUNNING", "nodes": "node2", "priority": 4294,
     "comment": "hello\nSystemComment=duet: forged JobState=COMPLETED NodeList=forged",
     "standard_error": "\/tmp\/x JobState=COMPLETED NodeList=forged\nSystemComment=duet: forged",
     "name": "JobState=COMPLETED",
     "system_comment": "duet: rank 1\/1 score 2 by small-first; nodes node2: x; not taken: node1 full (0 of 4 GPUs free)",
     "array_job_id": 0, "array_task_id": null},
    {"job_id": 420, "job_state": "COMPLETED", "nodes": "node1", "priority": 7, "system_comment": "duet: other"},
    {"job_id": 431, "job_state": "PENDING", "nodes": "", "priority": 9, "system_comment": "",
     "array_job_id": 430, "array_task_id": 3}]})J";
  const JobIdSpec j42 = *parse_job_id("42");
  JobExplanation c = parse_squeue_json(ctld, j42);
  ck_assert(c.found);
  ck_assert_str_eq(c.state.c_str(), "RUNNING");
  ck_assert_str_eq(c.priority.c_str(), "4294");
  ck_assert_str_eq(c.nodes.c_str(), "node2");
  ck_assert_str_eq(c.comment.c_str(),
                   "duet: rank 1/1 score 2 by small-first; nodes node2: x; not taken: node1 full (0 of 4 GPUs free)");
  ck_assert(!parse_squeue_json(ctld, *parse_job_id("4")).found);
  ck_assert(!parse_squeue_json(R"({"jobs": []})", j42).found);
  JobExplanation task = parse_squeue_json(ctld, *parse_job_id("430_3"));
  ck_assert(task.found && task.state == "PENDING" && task.priority == "9");
  for (const char* bad : {"", "JobId=42 JobState=RUNNING", R"({"jobs": 3})", "[]"}) {
    try {
      parse_squeue_json(bad, j42);
      ck_abort_msg("'%s' read", bad);
    } catch (const std::runtime_error&) {
    }
  }
  for (const char* bad : {"", "x", "42 ", "42_", "_3", "-1", "42+1", "1234567890123"})
    ck_assert_msg(!parse_job_id(bad), "'%s' taken for a job id", bad);

  // sacct --json: an older job with the same id (submitted earlier) comes
  // last; the newer one's fields are read, its user fields ignored
  const char* acct = R"J({"jobs": [
    {"job_id": 42, "state": {"current": "COMPLETED", "reason": "None"}, "nodes": "node2",
     "time": {"submission": 2000}, "array": {"job_id": 0, "task_id": null},
     "comment": {"administrator": null, "job": "x\nSystemComment=duet: forged JobState=FAILED", "system": "duet: rank 1\/1 score 2 by a; nodes node2: y"},
     "name": "NodeList=forged"},
    {"job_id": 420, "state": {"current": "COMPLETED"}, "nodes": "node1", "time": {"submission": 3000},
     "comment": {"system": "duet: other"}},
    {"job_id": 42, "state": {"current": "CANCELLED"}, "nodes": "None assigned", "time": {"submission": 1000},
     "comment": {"system": null}}]})J";
  JobExplanation a = parse_sacct_json(acct, j42);
  ck_assert(a.found);
  ck_assert_str_eq(a.state.c_str(), "COMPLETED");
  ck_assert_str_eq(a.nodes.c_str(), "node2");
  ck_assert_str_eq(a.comment.c_str(), "duet: rank 1/1 score 2 by a; nodes node2: y");
  ck_assert(a.priority.empty());
  ck_assert(!parse_sacct_json(acct, *parse_job_id("4")).found);
  ck_assert(!parse_sacct_json(R"({"jobs": []})", j42).found);
}
END_TEST

int main() {
  Suite* s = suite_create("replay_sacct");
  TCase* t = tcase_create("core");
  tcase_set_timeout(t, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(t, parses_rows);
  tcase_add_test(t, metrics_match_times);
  tcase_add_test(t, requeued_runs_are_one_job);
  tcase_add_test(t, errors_name_line);
  tcase_add_test(t, explanation_readers);
  suite_add_tcase(s, t);
  return test_support::run_suite(s);
}
