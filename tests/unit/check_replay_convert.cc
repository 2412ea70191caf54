// duet convert sacct and slurm-nodes: a site's sacct history to a trace
// (steps, never-run, running and CPU-only jobs left out and counted; types
// from AllocTRES, else ReqTRES; run times times the slowest node's speed) and
// scontrol's node list to a cluster (GPU types, Weight order, speeds).
#include <fstream>
#include <sstream>
#include <string>

#include "policy/io/csv.h"
#include "replay/sacct_trace.h"
#include "replay/slurm_nodes.h"
#include "tests/unit/test_data.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet;
using namespace duet::replay;
using test_support::source_path;

static Trace convert(const SacctTraceOptions& opt, SacctTraceCounts& c) {
  std::ifstream in(source_path("tests/unit/data/sacct_site.txt"));
  ck_assert(in.good());
  SacctRows rows = parse_sacct_allocations(in, "sacct_site.txt");
  c.steps = rows.steps;
  return trace_from_sacct(rows.jobs, "sacct_site.txt", opt, c);
}

START_TEST(sacct_to_trace) {
  SacctTraceOptions opt;
  opt.speeds = read_node_speeds(source_path("tests/unit/data/node_speeds.csv"));
  SacctTraceCounts c;
  Trace t = convert(opt, c);
  ck_assert_int_eq(t.jobs.size(), 3);
  ck_assert_int_eq(c.steps, 1);
  ck_assert_int_eq(c.never_ran, 1);     // 102, cancelled while pending
  ck_assert_int_eq(c.not_finished, 1);  // 106, running
  ck_assert_int_eq(c.cpu_only, 1);      // 103
  const JobSpec &a = t.jobs[0], &b = t.jobs[1], &d = t.jobs[2];
  ck_assert_int_eq(a.id, 100);
  ck_assert_double_eq(a.submit, 0);
  ck_assert_double_eq(a.duration, 600);  // 10 min on node1 (speed 1)
  ck_assert_int_eq(a.gpus, 2);
  ck_assert_str_eq(a.gpu_type.c_str(), "V100");
  ck_assert_str_eq(a.user.c_str(), "alice");
  ck_assert_str_eq(a.vc.c_str(), "research");
  // the multi-type job: 4 K80 + 4 V100 on node[1,3], paced by node3 (0.8)
  ck_assert_int_eq(b.id, 101);
  ck_assert_double_eq(b.submit, 60);
  ck_assert_double_eq_tol(b.duration, 1800 * 0.8, 1e-9);
  ck_assert_int_eq(b.gpus, 8);
  ck_assert_str_eq(b.gpu_type.c_str(), "K80|V100");
  ck_assert_str_eq(b.vc.c_str(), "prod");
  // an array task: JobIDRaw; AllocTRES untyped, so the type comes from ReqTRES
  ck_assert_int_eq(d.id, 105);
  ck_assert_double_eq(d.submit, 240);
  ck_assert_double_eq_tol(d.duration, 120 * 0.5, 1e-9);
  ck_assert_int_eq(d.gpus, 1);
  ck_assert_str_eq(d.gpu_type.c_str(), "P100");
}
END_TEST

START_TEST(sacct_options) {
  SacctTraceOptions opt;  // no speeds: run times as measured
  opt.vc_from_partition = true;
  SacctTraceCounts c;
  Trace t = convert(opt, c);
  ck_assert_double_eq(t.jobs[1].duration, 1800);
  ck_assert_str_eq(t.jobs[1].vc.c_str(), "gpu");
  opt.partitions = {"cpu"};
  SacctTraceCounts c2;
  ck_assert_int_eq(convert(opt, c2).jobs.size(), 0);
  ck_assert_int_eq(c2.other_partition, 5);
  ck_assert_int_eq(c2.cpu_only, 1);
}
END_TEST

static std::string sacct_error(const std::string& text, const NodeSpeeds& speeds = {}) {
  try {
    std::istringstream in(text);
    SacctRows rows = parse_sacct_allocations(in, "s.txt");
    SacctTraceOptions opt;
    opt.speeds = speeds;
    SacctTraceCounts c;
    trace_from_sacct(rows.jobs, "s.txt", opt, c);
  } catch (const InputError& e) { return e.what(); }
  return "";
}

START_TEST(sacct_errors_name_line) {
  const std::string h = "JobID|Submit|Start|End|NodeList|AllocTRES|ReqTRES|State\n";
  const std::string ok =
      "7|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:09|node9|gres/gpu=1|gres/gpu=1|COMPLETED\n";
  std::string e = sacct_error(h + ok, {{"node1", 1.0}});
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("node9") != std::string::npos, "%s", e.c_str());
  e = sacct_error(h + "\n8_2|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:09|n|gres/gpu=1||COMPLETED\n");
  ck_assert_msg(e.find("s.txt:3:") == 0 && e.find("JobIDRaw") != std::string::npos, "%s", e.c_str());
  e = sacct_error(h +
                  "7|2026-01-01T00:00:00|2026-01-01T00:00:01|2026-01-01T00:00:09|n|gres/gpu=1|gres/gpu=x|COMPLETED\n");
  ck_assert_msg(e.find("s.txt:2:") == 0 && e.find("ReqTRES") != std::string::npos, "%s", e.c_str());
  e = sacct_error(h + ok + ok);
  ck_assert_msg(e.find("s.txt:3:") == 0 && e.find("given twice (the same run as line 2)") != std::string::npos, "%s",
                e.c_str());
  ck_assert_str_eq(sacct_error(h + ok).c_str(), "");
}
END_TEST

// sacct -D: a requeued job's runs are one job, submitted at its first run's
// Submit (the requeue reset it), its duration all its runs' at their own
// nodes' speeds; a requeued job still running is not finished.
START_TEST(sacct_requeued_runs_are_one_job) {
  const std::string text =
      "JobIDRaw|JobID|Submit|Start|End|NodeList|AllocTRES|State\n"
      "7|7|2026-01-01T00:02:00|2026-01-01T00:03:00|2026-01-01T00:05:00|node2|gres/gpu=1|COMPLETED\n"
      "8|8|2026-01-01T00:00:30|2026-01-01T00:00:40|2026-01-01T00:00:50|node1|gres/gpu=2|COMPLETED\n"
      "7|7|2026-01-01T00:00:00|2026-01-01T00:00:10|2026-01-01T00:01:10|node1|gres/gpu=1|REQUEUED\n"
      "9|9|2026-01-01T00:00:20|2026-01-01T00:00:25|2026-01-01T00:00:35|node1|gres/gpu=1|REQUEUED\n"
      "9|9|2026-01-01T00:01:00|2026-01-01T00:01:30|Unknown|node2|gres/gpu=1|RUNNING\n";
  std::istringstream in(text);
  SacctRows rows = parse_sacct_allocations(in, "d.txt");
  SacctTraceOptions opt;
  opt.speeds = {{"node1", 1.0}, {"node2", 0.5}};
  SacctTraceCounts c;
  Trace t = trace_from_sacct(rows.jobs, "d.txt", opt, c);
  ck_assert_int_eq(t.jobs.size(), 2);
  ck_assert_int_eq(c.requeued, 1);
  ck_assert_int_eq(c.not_finished, 1);  // 9: its last run is running
  ck_assert_int_eq(t.jobs[0].id, 7);
  ck_assert_double_eq(t.jobs[0].submit, 0);
  ck_assert_double_eq_tol(t.jobs[0].duration, 60 * 1.0 + 120 * 0.5, 1e-9);
  ck_assert_int_eq(t.jobs[1].id, 8);
  ck_assert_double_eq(t.jobs[1].submit, 30);
  ck_assert_int_eq(t.jobs[1].gpus, 2);
}
END_TEST

START_TEST(nodes_to_cluster) {
  std::ifstream in(source_path("tests/unit/data/scontrol_nodes.txt"));
  auto nodes = parse_scontrol_nodes(in, "scontrol_nodes.txt");
  ck_assert_int_eq(nodes.size(), 4);
  ck_assert_int_eq(nodes[0].cpus, 8);
  ck_assert_int_eq(nodes[0].memory_mb, 16000);
  ck_assert_int_eq(nodes[2].gpus_by_type.at("k80"), 4);
  ck_assert_int_eq(nodes[2].gpus_by_type.at("v100"), 2);
  SlurmNodesOptions opt;
  opt.speeds = {{"node1", 0.9}};
  opt.type_speeds = {{"K80", 0.3}};
  SlurmNodesResult r = cluster_from_slurm_nodes(nodes, "scontrol_nodes.txt", opt);
  const auto& m = r.cluster.machines;
  ck_assert_int_eq(m.size(), 4);
  // Weight 1 first, then file order; node3's two types are two machines on one rack
  ck_assert_str_eq(m[0].name.c_str(), "node2");
  ck_assert_str_eq(m[0].gpu_type.c_str(), "P100");
  ck_assert_int_eq(m[0].gpus, 2);
  ck_assert_str_eq(m[1].name.c_str(), "node1");
  ck_assert_str_eq(m[2].name.c_str(), "node3:k80");
  ck_assert_str_eq(m[2].rack.c_str(), "node3");
  ck_assert_double_eq(m[2].speed, 0.3);
  ck_assert_str_eq(m[3].name.c_str(), "node3:v100");
  ck_assert(m[3].speed < 0);
  ck_assert_int_eq(r.cpu_only, 1);
  ck_assert_int_eq(r.cpus, 24);
  ck_assert_int_eq(r.speeds_given, 1);
  ck_assert_int_eq(r.speeds_from_features, 1);
  std::ostringstream out;
  write_node_speeds(out, r);
  const std::string text = out.str();
  ck_assert_str_eq(text.c_str(),
                   "node,gpu_type,num_gpus,speed\nnode2,P100,2,0.5\nnode1,V100,4,0.9\nnode3,K80|V100,6,1\n");
  // node3 left at 1: its V100 is known to no table here
  ck_assert_int_eq(r.speeds_from_types, 0);
  ck_assert_int_eq(r.unknown_types.size(), 1);
  ck_assert_str_eq(r.unknown_types[0].c_str(), "V100");

  // with what a table knows of each type: node3 gets its slowest type's
  // speed (--type-speed's K80 over the table's), node1 its type's
  opt.speeds.clear();
  opt.type_mean_speeds = {{"V100", 1.0}, {"K80", 0.25}, {"P100", 0.6}};
  r = cluster_from_slurm_nodes(nodes, "scontrol_nodes.txt", opt);
  ck_assert_int_eq(r.speeds_given, 0);
  ck_assert_int_eq(r.speeds_from_features, 1);
  ck_assert_int_eq(r.speeds_from_types, 2);
  ck_assert(r.unknown_types.empty());
  std::ostringstream typed;
  write_node_speeds(typed, r);
  const std::string typed_text = typed.str();
  ck_assert_str_eq(typed_text.c_str(),
                   "node,gpu_type,num_gpus,speed\nnode2,P100,2,0.5\nnode1,V100,4,1\nnode3,K80|V100,6,0.3\n");
}
END_TEST

static std::string nodes_error(const std::string& text) {
  try {
    std::istringstream in(text);
    auto nodes = parse_scontrol_nodes(in, "n.txt");
    cluster_from_slurm_nodes(nodes, "n.txt", {});
  } catch (const InputError& e) { return e.what(); }
  return "";
}

START_TEST(nodes_errors_name_line) {
  std::string e = nodes_error("NodeName=a Gres=gpu:4 CPUTot=8\n");
  ck_assert_msg(e.find("n.txt:1:") == 0 && e.find("TYPE") != std::string::npos, "%s", e.c_str());
  e = nodes_error("NodeName=a Gres=gpu:v100:4\nNodeName=b CPUTot=many\n");
  ck_assert_msg(e.find("n.txt:2:") == 0 && e.find("CPUTot") != std::string::npos, "%s", e.c_str());
  e = nodes_error("Node a\n");
  ck_assert_msg(e.find("n.txt:1:") == 0 && e.find("NodeName") != std::string::npos, "%s", e.c_str());
  e = nodes_error("NodeName=a Gres=gpu:v100:4 AvailableFeatures=speed_fast\n");
  ck_assert_msg(e.find("n.txt:1:") == 0 && e.find("speed_fast") != std::string::npos, "%s", e.c_str());
  e = nodes_error("NodeName=a Gres=(null)\n");
  ck_assert_msg(e.find("no node has a GPU") != std::string::npos, "%s", e.c_str());
  ck_assert(nodes_error("").find("no nodes") != std::string::npos);
  // What the cluster file could not hold back: a type with a space, a node
  // name with ':' (it would collide with the split name of a two-type node).
  e = nodes_error("NodeName=a Gres=gpu:v 100:4\n");
  ck_assert_msg(e.find("n.txt:1:") == 0 && e.find("GPU type") != std::string::npos, "%s", e.c_str());
  e = nodes_error("NodeName=a:v100 Gres=gpu:v100:4\n");
  ck_assert_msg(e.find("n.txt:1:") == 0 && e.find("host name") != std::string::npos, "%s", e.c_str());
}
END_TEST

int main() {
  Suite* s = suite_create("replay_convert");
  TCase* t = tcase_create("core");
  tcase_set_timeout(t, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(t, sacct_to_trace);
  tcase_add_test(t, sacct_options);
  tcase_add_test(t, sacct_errors_name_line);
  tcase_add_test(t, sacct_requeued_runs_are_one_job);
  tcase_add_test(t, nodes_to_cluster);
  tcase_add_test(t, nodes_errors_name_line);
  suite_add_tcase(s, t);
  return test_support::run_suite(s);
}
